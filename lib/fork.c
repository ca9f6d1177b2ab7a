/* Fork handling: the one place that fixes the order of every module's prefork, postfork_parent
 * and postfork_child, and the one reset of a child, shared by fork()'s child handler and a
 * child made without the handlers (a raw clone, syscall(SYS_fork)), which is found at its
 * first slow step by the page the kernel wiped (mf_wiped). Also the fork lock the slow steps
 * hold. Runs inside malloc and in a child of a multi-threaded parent: no malloc, no stdio. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fork.h"
#include "life/life.h"
#include "loaded.h"
#include "mf_internal.h"
#include "thread.h"

/* (Reader-preferring: a reader that holds the loader's lock gets in while a fork waits.) */
pthread_rwlock_t mf_fork_lock = PTHREAD_RWLOCK_INITIALIZER;
unsigned mf_fork_pending;

void mf_fork_wait(void)
{
	int saved = errno;
	unsigned n;
	while ((n = __atomic_load_n(&mf_fork_pending, __ATOMIC_ACQUIRE)))
		syscall(SYS_futex, &mf_fork_pending, FUTEX_WAIT_PRIVATE, n, NULL, NULL, 0);
	errno = saved;
}

/* fork() from a signal handler that interrupted this thread in one of the profiler's slow
 * steps: it holds mf_fork_lock (or is taking or giving it back; maybe more), so fork cannot
 * wait for the others. Or from a thread in seccomp strict mode, where the clone kills it (the
 * flag goes with it: the forking thread's own), or about to enter it. */
static MF_TLS int mf_fork_in_slow_step;
/* In a child of such a fork: the lock's state is not known; later forks leave it alone. */
static int mf_fork_inert;

/* No thread may be inside the profiler (libunwind, dl_iterate_phdr, our locks) at fork: the
 * child would inherit their locks held. The program's own dlopen/dlclose in another thread
 * holds the loader's lock too, with _r_debug.r_state away from RT_CONSISTENT: wait (bounded)
 * for that to end, so the child can unwind; the child checks what it inherited (loader.c).
 * Each module's lock is taken in this order, after the fork lock (every other lock of ours is
 * taken under it), and let go in the reverse order. */
static void mf_fork_prefork(void)
{
	if (mf_tls.fork_held || mf_fork_inert || mf_confined) {
		mf_fork_in_slow_step = 1;
		return;
	}
	mf_busy_enter(); /* a signal handler's allocation here must not wait for our own lock */
	for (int i = 0;
	     i < 100000 && __atomic_load_n(&_r_debug.r_state, __ATOMIC_ACQUIRE) != RT_CONSISTENT;
	     i++)
		sched_yield();
	__atomic_add_fetch(&mf_fork_pending, 1, __ATOMIC_SEQ_CST);
	pthread_rwlock_wrlock(&mf_fork_lock);
	mf_process_prefork();
	mf_modules_prefork();
	mf_fds_apart_prefork();
	mf_thread_prefork();
	mf_sampling_prefork();
	if (mf_life_on)
		mf_life_prefork();
}

static void mf_fork_postfork_parent(void)
{
	if (mf_fork_in_slow_step) {
		mf_fork_in_slow_step = 0;
		return;
	}
	if (mf_life_on)
		mf_life_postfork_parent();
	mf_thread_postfork_parent();
	mf_fds_apart_postfork_parent();
	mf_modules_postfork();
	pthread_rwlock_unlock(&mf_fork_lock);
	if (!__atomic_sub_fetch(&mf_fork_pending, 1, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &mf_fork_pending, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	mf_busy_leave();
}

/* A child has one thread, which holds no lock of ours now (fork()'s handlers took them, or,
 * made without them, it was running the program's code): every lock starts afresh, the
 * parent's thread states are dropped (their files are the parent's: shared mappings, where the
 * child's calls would add to the parent's profile), and the child records in a directory of
 * its own. MF_FORK_INERT (forked by a signal handler inside a slow step): the process is not
 * recorded, the fork lock is left as it is for the interrupted step to finish with, and the
 * walk's epoch stays 0 (every call takes the slow path, which records nothing). In a child
 * made without the handlers, the page's owner is set last: until then every call takes the
 * slow path, and a nested one is not counted in the parent's file. */
static void mf_fork_child_reset(enum mf_fork_child how)
{
	mf_sampling_postfork_child(how != MF_FORK_RAW);
	if (how != MF_FORK_RAW) {
		mf_gate_restore();
		mf_wiped.owner = getpid();
	}
	if (mf_life_on)
		mf_life_postfork_child();
	mf_pool_reset();
	mf_fds_apart_postfork_child();
	mf_thread_postfork_child(how);
	mf_fork_pending = 0; /* (other threads', in the parent) */
	mf_prof_dir_forget();
	mf_modules_reset();
	mf_loader_postfork_child();
	if (how == MF_FORK_INERT)
		return;
	/* Not unlocked: the parent's waiting readers are registered in the lock word and do not
	 * exist here. A fresh lock is the honest state. */
	pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;
	memcpy(&mf_fork_lock, &fresh, sizeof(fresh));
	/* (the gate before the epoch: until then every call takes the slow path) */
	if (how == MF_FORK_RAW)
		mf_gate_restore();
	mf_unwind_postfork_child();
	if (how == MF_FORK_RAW)
		mf_wiped.owner = getpid();
}

static void mf_fork_postfork_child(void)
{
	if (mf_fork_in_slow_step) {
		mf_fork_in_slow_step = 0;
		mf_fork_inert = 1;
		mf_fork_child_reset(MF_FORK_INERT);
		MF_LOG_ONCE("process %d was forked by a signal handler that interrupted the "
			    "profiler; it is not recorded",
			    (int)getpid());
		return;
	}
	mf_fork_child_reset(MF_FORK_CHILD);
	if (mf_loader_stuck)
		MF_LOG_ONCE("process %d was forked while another thread held the loader's lock; "
			    "its calls are counted without stacks (unwinding would wait for ever)",
			    (int)getpid());
	mf_control_postfork_child();
	mf_busy_leave();
}

/* (In .bss: anonymous memory, which MADV_WIPEONFORK applies to.) */
_Alignas(MF_PAGE_SIZE) union mf_wiped mf_wiped;
int mf_wiped_marked;

void mf_fork_raw_child(void)
{
	int saved = errno;
	mf_fork_child_reset(MF_FORK_RAW);
	errno = saved;
}

void mf_fork_init(void)
{
	int saved = errno;
	mf_wiped.owner = getpid();
	mf_wiped_marked = madvise(&mf_wiped, sizeof(mf_wiped), MADV_WIPEONFORK) == 0;
	errno = saved;
	pthread_atfork(mf_fork_prefork, mf_fork_postfork_parent, mf_fork_postfork_child);
}
