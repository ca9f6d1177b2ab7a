/* The profiler's spinlocks (mf_spin_take, mf_spin_give in mf_internal.h): the wait of a thread
 * that found one held. Runs inside malloc: no malloc, errno preserved. */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mf_internal.h"

unsigned mf_spin_until_zero(const int *word, unsigned n)
{
	int saved = errno;
	for (; __atomic_load_n(word, __ATOMIC_ACQUIRE); n++)
		if (n < 64 || mf_confined) { /* (seccomp strict mode: no system call) */
			mf_cpu_relax();
		} else if (n < 128) {
			sched_yield();
		} else { /* (woken by the timeout: the holder stores 0 and wakes no one) */
			struct timespec ts = {0, 50000};
			syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
		}
	errno = saved;
	return n;
}

void mf_spin_wait(int *lock)
{
	unsigned n = 0;
	while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
		n = mf_spin_until_zero(lock, n);
}
