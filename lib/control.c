/* Recording switched on and off while the program runs (MALLOC_FREQ_START, the public API of
 * include/malloc_freq.h) and the totals the program may ask for. Called by the program, maybe
 * from a signal handler: no malloc, no stdio, errno kept; the switches are single atomic
 * operations on words the hot path already reads, so they cost it nothing. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "malloc_freq.h"
#include "mf_internal.h"

_Static_assert(MALLOC_FREQ_ENTRY_POINTS == MF_ENTRY_COUNT, "the API's entry points are the file's");

/* Cold until mf_control_init: no call is recorded before then anyway (no thread has started). */
unsigned mf_gate = MF_GATE_COLD;

void mf_control_init(void)
{
	if (mf_config.hot)
		__atomic_and_fetch(&mf_gate, ~MF_GATE_COLD, __ATOMIC_RELAXED);
	if (mf_config.start_off)
		__atomic_or_fetch(&mf_gate, MF_GATE_OFF, __ATOMIC_RELAXED);
}

/* Started off, the process may have no call to record for a long time: its directory is made
 * now, so that it can be named (malloc_freq_dir) and found before recording begins. */
void mf_control_start(void)
{
	if (!mf_config.start_off)
		return;
	int saved = errno, cancel = mf_nocancel_begin();
	mf_busy_enter();
	mf_fork_hold();
	mf_prof_dir_ensure(); /* (a failure is said there, and the first thread stops there) */
	mf_fork_release();
	mf_busy_leave();
	mf_nocancel_end(cancel);
	errno = saved;
}

MF_EXPORT void malloc_freq_enable(void)
{
	__atomic_and_fetch(&mf_gate, ~MF_GATE_OFF, __ATOMIC_RELAXED);
}

MF_EXPORT void malloc_freq_disable(void)
{
	__atomic_or_fetch(&mf_gate, MF_GATE_OFF, __ATOMIC_RELAXED);
}

MF_EXPORT void malloc_freq_thread_enable(void)
{
	mf_tls.off = 0;
}

MF_EXPORT void malloc_freq_thread_disable(void)
{
	mf_tls.off = 1;
	/* (a handler's call in between still sees the thread off in the slow path) */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	struct mf_thread *t = mf_tls.thread;
	if (t)
		mf_thread_drop_hot(t);
}

/* The totals at the last malloc_freq_reset, which malloc_freq_stats subtracts; under
 * mf_control_lock. */
static pthread_mutex_t mf_control_lock = PTHREAD_MUTEX_INITIALIZER;
static struct malloc_freq_stats mf_control_base;
static pid_t mf_control_base_pid;

static void mf_control_stats(struct malloc_freq_stats *s)
{
	int cancel = mf_nocancel_begin();
	mf_busy_enter();
	mf_fork_hold(); /* (signals blocked: a handler's allocation cannot wait on a lock held here) */
	mf_thread_stats(s);
	mf_fork_release();
	mf_busy_leave();
	mf_nocancel_end(cancel);
}

static uint64_t mf_control_less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

MF_EXPORT int malloc_freq_stats(struct malloc_freq_stats *s)
{
	if (!s) {
		errno = EINVAL;
		return -1;
	}
	int saved = errno;
	mf_control_stats(s);
	pthread_mutex_lock(&mf_control_lock);
	if (mf_control_base_pid == getpid()) { /* (a forked child's count starts at zero) */
		for (int e = 0; e < MF_ENTRY_COUNT; e++) {
			s->calls[e] = mf_control_less(s->calls[e], mf_control_base.calls[e]);
			s->bytes[e] = mf_control_less(s->bytes[e], mf_control_base.bytes[e]);
		}
		s->calls_off = mf_control_less(s->calls_off, mf_control_base.calls_off);
	}
	pthread_mutex_unlock(&mf_control_lock);
	errno = saved;
	return 0;
}

MF_EXPORT int malloc_freq_snapshot(const char *label)
{
	long r = mf_snapshot_take(label, 0);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

MF_EXPORT int malloc_freq_reset(void)
{
	pthread_mutex_lock(&mf_control_lock);
	long r = mf_snapshot_take("reset", MF_SNAPSHOT_RESET);
	if (r > 0) {
		mf_control_stats(&mf_control_base);
		mf_control_base_pid = getpid();
	}
	pthread_mutex_unlock(&mf_control_lock);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}
