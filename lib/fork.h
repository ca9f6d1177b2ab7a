/* fork.c's interface and the fork lock: the lock every slow step holds for reading (and a
 * fork for writing), the signals blocked and the cancellation turned off while it is held, the
 * loaded objects walked with signals blocked, the slow paths' cancellation points turned off.
 * For the files whose steps may meet a fork: runs inside malloc, no malloc, no stdio. */
#ifndef MF_FORK_H
#define MF_FORK_H

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mf_internal.h"
#include "thread.h"

/* fork.c: fork handling. pthread_atfork's handlers call each module's prefork and postfork in
 * the one order fork.c fixes; a child, made with those handlers or without them, is reset by
 * the one sequence there, each module's postfork_child in turn. */
enum mf_fork_child {
	MF_FORK_CHILD, /* fork()'s handlers ran */
	MF_FORK_RAW,   /* a child made without them (a raw clone), at its first slow step */
	MF_FORK_INERT, /* forked by a signal handler inside a slow step: not recorded */
};
void mf_fork_init(void); /* at start: the handlers, and mf_wiped marked to be wiped in a child */
void mf_fork_raw_child(void); /* errno is kept */
/* thread.c's part: the list of threads locked across fork; in a child, the parent's states
 * dropped. */
void mf_thread_prefork(void);
void mf_thread_postfork_parent(void);
void mf_thread_postfork_child(enum mf_fork_child how);

/* Held for reading while the profiler calls libunwind, looks at the loaded objects, takes
 * one of its locks or creates or grows a file; for writing across fork(): so no thread holds
 * such a lock (its own, libunwind's, the loader's) when the child is made. A recorded call
 * whose stack, rules and trie nodes are all known takes none of those steps, and does not take
 * this lock either: each slow step calls mf_fork_hold() first, and the entry point releases it
 * at the end. A fork is not starved by allocating threads: while one is pending, a new reader
 * waits (mf_fork_wait), but for a thread that holds the loader's lock (mf_tls.loader_held),
 * which the fork may be waiting for (through a reader that waits for the loader's lock). */
extern pthread_rwlock_t mf_fork_lock;
extern unsigned mf_fork_pending; /* forks waiting for the lock or holding it */
void mf_fork_wait(void);	 /* until none is */
/* While it is held, every signal is blocked (but glibc's set*id broadcast) and cancellation is
 * off: nothing can interrupt a step that holds a lock of ours (every other lock of ours is
 * taken under it), neither a signal handler that jumps out with siglongjmp nor an
 * asynchronous cancellation, which would leave it held and every later fork waiting for ever.
 * Cancellation's signal is blocked too: glibc 2.36 acts on one sent just before the state was
 * set to disabled (the lock was left held in about one run in two of 100 cancelled rounds).
 * Delivered when the mask is given back, it cancels the thread then. (libunwind's own signal
 * masking, then, does nothing.) */
#define MF_SIGNAL_CANCEL (1ull << (32 - 1)) /* glibc's SIGCANCEL */
#define MF_SIGNALS_ALL	 (~0ull & ~(1ull << (33 - 1)))
static inline void mf_fork_hold(void)
{
	if (!mf_tls.fork_held) {
		uint64_t all = MF_SIGNALS_ALL;
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &mf_tls.fork_signals, 8);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mf_tls.fork_cancel);
		mf_tls.fork_held = 1;
		if (mf_unlikely(__atomic_load_n(&mf_fork_pending, __ATOMIC_ACQUIRE)) &&
		    !mf_tls.loader_held)
			mf_fork_wait();
		pthread_rwlock_rdlock(&mf_fork_lock);
	}
}
static inline void mf_fork_release(void)
{
	pthread_rwlock_unlock(&mf_fork_lock);
	mf_tls.fork_held = 0;
	pthread_setcancelstate(mf_tls.fork_cancel, &mf_tls.fork_cancel);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mf_tls.fork_signals, NULL, 8);
}

/* dl_iterate_phdr with every signal blocked: it holds the loader's lock, and a program's
 * signal handler that walked the loaded objects too (libunwind does, in unw_backtrace) would
 * wait on that lock for ever. The profiler's own walks all go through here. */
static inline int mf_objects_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	if (mf_tls.fork_held) /* (blocked already) */
		return dl_iterate_phdr(cb, arg);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = dl_iterate_phdr(cb, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* The profiler's slow paths open, write and close files: cancellation points that must not
 * make malloc one. */
static inline int mf_nocancel_begin(void)
{
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}
static inline void mf_nocancel_end(int old)
{
	pthread_setcancelstate(old, &old);
}

#endif
