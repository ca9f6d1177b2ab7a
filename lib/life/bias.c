/* The owner's way into its own table without a locked instruction (map.c's mf_life_enter).
 *
 * A thread enters its own table by storing 1 in the table's busy word and then reading its
 * shared word: while that is 0, no other thread enters, and the thread goes in without a lock.
 * Another thread that must enter (a free of a block the owner made, a fork) first takes the
 * table's lock, stores 1 in shared, then makes every thread of the process pass a full memory
 * barrier (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) and waits for busy to be 0: each
 * owner then either had its 1 in busy seen, or will see the 1 in shared and take the lock
 * from then on. The one barrier is the other side's, so the owner's side needs none (the
 * asymmetric barrier that read-copy-update in user space is built on). A table so shared
 * stays shared: its blocks are freed by other threads, which then lock it, as every thread
 * does where the system call is not to be had.
 *
 * membarrier is asked for only where the process is under no seccomp filter (a filter may kill
 * a process for a system call it does not list): at start, where PR_GET_SECCOMP says so (as
 * fds_apart.c asks), and never after the program installs one or enters strict mode
 * (confine.c: every table is shared first). In a fork's child it registers again. Where it
 * cannot be had after all (refused once granted; a filter installed by a signal handler that
 * interrupted its thread in the map, which cannot wait for the tables then), the other side
 * pauses a millisecond instead of the barrier: an owner's store is seen by then in practice,
 * not by any rule. Runs inside malloc: no malloc, errno preserved. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "life/internal.h"

#ifndef SYS_membarrier
#define SYS_membarrier -1 /* (answered ENOSYS below) */
#endif
#define MF_MEMBARRIER_QUERY			 0
#define MF_MEMBARRIER_PRIVATE_EXPEDITED		 (1 << 3)
#define MF_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED (1 << 4)

/* membarrier is to be had: new tables start biased. Cleared for good once it may no longer
 * be asked (refused once, or a filter may be in place): a table biased before then is only
 * ever unbiased by the pause (mf_life_bias_barrier). */
int mf_life_bias;

static long mf_life_membarrier(int cmd)
{
	if (SYS_membarrier < 0)
		return -ENOSYS;
	return mf_arch_syscall(SYS_membarrier, cmd, 0, 0, 0, 0, 0);
}

void mf_life_bias_init(void)
{
	int saved = errno;
	long q = 0;
	mf_life_bias = prctl(PR_GET_SECCOMP) == 0 &&
		       (q = mf_life_membarrier(MF_MEMBARRIER_QUERY)) > 0 &&
		       (q & MF_MEMBARRIER_PRIVATE_EXPEDITED) &&
		       mf_life_membarrier(MF_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED) == 0;
	errno = saved;
}

void mf_life_bias_off(void)
{
	__atomic_store_n(&mf_life_bias, 0, __ATOMIC_RELAXED);
}

void mf_life_bias_barrier(void)
{
	int saved = errno;
	long r = -ENOSYS;
	if (__atomic_load_n(&mf_life_bias, __ATOMIC_RELAXED)) { /* (none biased while never set) */
		r = mf_life_membarrier(MF_MEMBARRIER_PRIVATE_EXPEDITED);
		if (r == -EPERM &&
		    mf_life_membarrier(MF_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED) == 0)
			r = mf_life_membarrier(MF_MEMBARRIER_PRIVATE_EXPEDITED); /* (a child) */
		if (r < 0) {
			/* Refused, after it was granted (a seccomp filter installed by a system
			 * call made without glibc, which the profiler does not see). */
			mf_life_bias_off();
			MF_LOG_ONCE("membarrier() failed after it was granted (%s): lifetimes "
				    "lock every thread's table from now on",
				    strerrordesc_np((int)-r));
		}
	}
	if (r < 0) { /* (without it: an owner's store is taken to be seen after a pause, as in
			practice it is; tables still biased are shared as they are needed) */
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	errno = saved;
}
