/* The program's control of the profiler while it runs: the public API of malloc_freq.h
 * (switches, totals, snapshots, tags), MALLOC_FREQ_START, and the signals and control thread
 * that do the same from outside. No malloc, no stdio, errno kept; the switches are atomic
 * operations on words the hot path already reads (so they cost it nothing) and signal-safe. */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "fork.h"
#include "loaded.h"
#include "malloc_freq.h"
#include "mf_internal.h"
#include "thread.h"

_Static_assert(MALLOC_FREQ_ENTRY_POINTS == MF_ENTRY_COUNT, "the API's entry points are the file's");

/* The gate as set, where a child finds it (mf_wiped is wiped there). */
static unsigned mf_gate_kept;

void mf_gate_set(unsigned bits, int on)
{
	if (on) {
		__atomic_or_fetch(&mf_wiped.gate, bits, __ATOMIC_SEQ_CST);
		__atomic_or_fetch(&mf_gate_kept, bits, __ATOMIC_RELAXED);
	} else {
		__atomic_and_fetch(&mf_wiped.gate, ~bits, __ATOMIC_SEQ_CST);
		__atomic_and_fetch(&mf_gate_kept, ~bits, __ATOMIC_RELAXED);
	}
}

void mf_gate_toggle(unsigned bits)
{
	__atomic_xor_fetch(&mf_wiped.gate, bits, __ATOMIC_RELAXED);
	__atomic_xor_fetch(&mf_gate_kept, bits, __ATOMIC_RELAXED);
}

void mf_gate_restore(void)
{
	mf_gate_set(MF_GATE_HOLD, 0); /* (no snapshot runs here) */
	__atomic_store_n(&mf_wiped.gate, __atomic_load_n(&mf_gate_kept, __ATOMIC_RELAXED),
			 __ATOMIC_SEQ_CST);
}

/* Off (1) or on (0) as malloc_freq_disable or _enable last asked, -1 before either: one
 * called before the library started (a library's constructor that runs before ours, before
 * any allocation) decides how it starts, rather than MALLOC_FREQ_START. */
static int mf_control_switched = -1;

/* Cold until mf_control_init (no call is recorded before then anyway: no thread has started;
 * and mf_wiped.epoch is 0 until the rule table's start). */
void mf_control_init(void)
{
	mf_gate_set(MF_GATE_COLD, !mf_config.hot);
	int switched = __atomic_load_n(&mf_control_switched, __ATOMIC_RELAXED);
	mf_gate_set(MF_GATE_OFF, switched >= 0 ? switched : mf_config.start_off);
}

/* Snapshots asked for by signal, counted by the handler: the control thread waits on this
 * word (a futex) and takes one snapshot for whatever number of signals came meanwhile. */
static unsigned mf_control_asked;

/* Async-signal-safe: an atomic operation and a futex wake, errno kept. */
static void mf_control_on_signal(int sig)
{
	int saved = errno;
	if (sig == mf_config.toggle_signal) {
		mf_gate_toggle(MF_GATE_OFF);
	} else {
		__atomic_add_fetch(&mf_control_asked, 1, __ATOMIC_RELEASE);
		if (!mf_confined) /* (strict mode: taken at the next signal or interval) */
			syscall(SYS_futex, &mf_control_asked, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	errno = saved;
}

/* The handler for sig (MALLOC_FREQ_<what>_SIGNAL), unless the process came with another
 * disposition for it (ignored, or a handler: exec keeps SIG_IGN): that one is left alone.
 * Returns 1 if installed. */
static int mf_control_install(int sig, const char *what)
{
	struct sigaction old, sa;
	if (!sig || sigaction(sig, NULL, &old))
		return 0;
	if (old.sa_handler != SIG_DFL) {
		mf_log("MALLOC_FREQ_%s_SIGNAL: SIG%s is %s at start; left as it is (off)", what,
		       sigabbrev_np(sig), old.sa_handler == SIG_IGN ? "ignored" : "handled");
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mf_control_on_signal;
	sa.sa_flags = SA_RESTART;
	return sigaction(sig, &sa, NULL) == 0;
}

static uint64_t mf_control_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The control thread: takes the snapshots asked for by signal and by interval. Every signal
 * blocked; whatever it allocates is the profiler's own. */
static int mf_control_stopping; /* mf_control_stop: the thread is to end */
static pid_t mf_control_tid;	/* the thread, while it runs */

static void *mf_control_main(void *arg)
{
	(void)arg;
	mf_busy_enter();
	mf_tls.own++;
	__atomic_store_n(&mf_control_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	prctl(PR_SET_NAME, "malloc_freq");
	uint64_t every = mf_config.snapshot_interval_ms, next = mf_control_now_ms() + every;
	unsigned seen = 0; /* (not read here: a signal may come before this thread runs) */
	for (;;) {
		struct timespec wait, *until = NULL;
		if (every) {
			uint64_t now = mf_control_now_ms();
			if (now >= next) {
				mf_snapshot_take("interval", MF_SNAPSHOT_BACKGROUND);
				next = next + every > now ? next + every : now + every;
				continue;
			}
			wait.tv_sec = (time_t)((next - now) / 1000u);
			wait.tv_nsec = (long)((next - now) % 1000u) * 1000000;
			until = &wait;
		}
		syscall(SYS_futex, &mf_control_asked, FUTEX_WAIT_PRIVATE, seen, until, NULL, 0);
		if (__atomic_load_n(&mf_control_stopping, __ATOMIC_ACQUIRE))
			break;
		unsigned asked = __atomic_load_n(&mf_control_asked, __ATOMIC_ACQUIRE);
		if (asked != seen) {
			seen = asked;
			mf_snapshot_take("signal", MF_SNAPSHOT_BACKGROUND);
		}
	}
	mf_tls.own--;
	mf_busy_leave();
	return NULL;
}

void mf_control_stop(void)
{
	pid_t tid = __atomic_load_n(&mf_control_tid, __ATOMIC_ACQUIRE);
	__atomic_store_n(&mf_control_stopping, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&mf_control_asked, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &mf_control_asked, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	/* (until the kernel no longer knows the thread: at most two seconds, in 1 ms steps) */
	for (int i = 0;
	     tid && i < 2000 && !(syscall(SYS_tgkill, getpid(), tid, 0) < 0 && errno == ESRCH); i++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/* Started with every signal blocked (the thread keeps that mask): a signal for the process is
 * never delivered to it, so the program's handlers never run there. */
static int mf_control_thread(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_t th;
	int err = pthread_attr_init(&attr);
	if (!err) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 << 10);
		mf_busy_enter();
		mf_tls.own++; /* (its stack and thread block are the profiler's) */
		err = pthread_create(&th, &attr, mf_control_main, NULL);
		mf_tls.own--;
		mf_busy_leave();
		/* (not destroyed: it holds nothing to free, and glibc before 2.34 frees its CPU
		 * set, NULL, with the first free in the lookup order, a program's own) */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		mf_log("cannot start the thread that takes snapshots (%s): "
		       "MALLOC_FREQ_SNAPSHOT_SIGNAL and MALLOC_FREQ_SNAPSHOT_INTERVAL are off",
		       strerrordesc_np(err));
	return err;
}

/* The settings asked for the control thread and the process started one: so does a child
 * forked with fork()'s handlers. */
static int mf_control_wanted;
pid_t mf_control_child;

/* Not started here, in the handler: a child of a multi-threaded parent that is about to exec
 * may call only async-signal-safe functions, and the program's own child handlers (run after
 * this one) have not yet made its state whole. The child's first recorded call starts it:
 * a program that calls malloc has left that regime already, and one that execs without an
 * allocation (fork and exec) never starts a thread. Signals that come before are counted and
 * served when it starts; the parent's count is not the child's. */
void mf_control_postfork_child(void)
{
	__atomic_store_n(&mf_control_asked, 0, __ATOMIC_RELAXED);
	mf_control_child = 0;
	if (!mf_control_wanted)
		return;
	if (mf_loader_stuck) /* (pthread_create takes the loader's TLS lock: it may be held) */
		mf_log("process %d: no thread takes its snapshots (forked while another thread "
		       "held the loader's lock); MALLOC_FREQ_SNAPSHOT_SIGNAL and "
		       "MALLOC_FREQ_SNAPSHOT_INTERVAL are off there",
		       (int)getpid());
	else
		mf_control_child = getpid();
}

/* Only in the process it was asked for: a vfork or posix_spawn child shares this memory (and
 * the caller's thread) until it execs or exits, and a child made without fork()'s handlers
 * copied the word from its parent; their pids differ. Once, though the child's first threads
 * may come here together. Not while this thread holds the fork lock (a signal handler's call
 * inside a slow step): a later call starts it. */
void mf_control_child_start(void)
{
	pid_t me = getpid();
	if (!mf_tls.fork_held && __atomic_compare_exchange_n(&mf_control_child, &me, 0, 0,
							     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		mf_control_thread();
}

/* Started off, the process may have no call to record for a long time: its directory is made
 * now, so that it can be named (malloc_freq_dir) and found before recording begins. */
void mf_control_start(void)
{
	int saved = errno;
	if (mf_config.start_off) {
		int cancel = mf_nocancel_begin();
		mf_busy_enter();
		mf_fork_hold();
		mf_prof_dir_ensure(); /* (a failure is said there; the first thread stops there) */
		mf_fork_release();
		mf_busy_leave();
		mf_nocancel_end(cancel);
	}
	mf_control_install(mf_config.toggle_signal, "TOGGLE");
	int by_signal = mf_control_install(mf_config.snapshot_signal, "SNAPSHOT");
	if (by_signal || mf_config.snapshot_interval_ms)
		mf_control_wanted = mf_control_thread() == 0;
	errno = saved;
}

MF_EXPORT void malloc_freq_enable(void)
{
	__atomic_store_n(&mf_control_switched, 0, __ATOMIC_RELAXED);
	mf_gate_set(MF_GATE_OFF, 0);
}

MF_EXPORT void malloc_freq_disable(void)
{
	__atomic_store_n(&mf_control_switched, 1, __ATOMIC_RELAXED);
	mf_gate_set(MF_GATE_OFF, 1);
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
	/* (signals blocked: a handler's allocation cannot wait on a lock held here) */
	mf_fork_hold();
	mf_thread_stats(s);
	mf_fork_release();
	mf_busy_leave();
	mf_nocancel_end(cancel);
}

static uint64_t mf_control_less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Whether a function of malloc_freq.h answers as the stub library's: the library could not
 * start (it said why). Started first if nothing started it yet, but not in seccomp strict
 * mode, where it may make no system call (and the function answers EPERM). */
static int mf_control_cannot_start(void)
{
	return mf_interpose_failed() || (!mf_confined && mf_interpose_api() < 0);
}

MF_EXPORT int malloc_freq_stats(struct malloc_freq_stats *s)
{
	if (s && mf_control_cannot_start()) {
		memset(s, 0, sizeof(*s));
		errno = ENOSYS;
		return -1;
	}
	if (!s || mf_confined) { /* (seccomp strict mode: no system call) */
		errno = s ? EPERM : EINVAL;
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

/* The thread's tag path changed: its next recorded call finds the node of the new one. */
static void mf_control_tags_changed(void)
{
	mf_tls.tag_epoch++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	struct mf_thread *t = mf_tls.thread;
	if (t)
		mf_thread_drop_hot(t); /* (its hot stacks lead to leaves of the old path) */
}

MF_EXPORT void malloc_freq_tag_push(const char *name)
{
	if (mf_confined) { /* (strict mode: nothing is recorded, the name not needed) */
		mf_tls.tag_depth++;
		return;
	}
	int saved = errno;
	unsigned id = mf_tags_intern(name);
	if (mf_tls.tag_depth < MF_TAG_DEPTH) {
		mf_tls.tags[mf_tls.tag_depth++] = (uint16_t)id;
		mf_control_tags_changed();
	} else {
		mf_tls.tag_depth++; /* (deeper: counted, so that pops match, not kept) */
	}
	errno = saved;
}

MF_EXPORT void malloc_freq_tag_pop(void)
{
	if (!mf_tls.tag_depth)
		return;
	if (--mf_tls.tag_depth < MF_TAG_DEPTH)
		mf_control_tags_changed();
}

MF_EXPORT int malloc_freq_snapshot(const char *label)
{
	long r = mf_control_cannot_start() ? -ENOSYS /* (no directory made: there is none to use) */
		 : mf_confined		   ? -EPERM
					   : mf_snapshot_take(label, 0);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

MF_EXPORT int malloc_freq_reset(void)
{
	int cannot = mf_control_cannot_start();
	if (cannot || mf_confined) {
		errno = cannot ? ENOSYS : EPERM;
		return -1;
	}
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
