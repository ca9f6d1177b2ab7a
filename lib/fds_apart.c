/* The profiler's files are opened in a descriptor table of their own: a short-lived task that
 * shares the process's memory (so the mappings it makes are the process's) but has a copy of
 * its descriptor table, made and dropped with the task. The program's table never holds a
 * descriptor of ours, even for an instant: its open() still returns the lowest free number
 * while other threads start, and it never finds its last free slot taken (RLIMIT_NOFILE).
 *
 * The task is a thread of the process made by clone(CLONE_VM | CLONE_THREAD, without
 * CLONE_FILES), with every signal blocked; the caller waits until it ends, so it runs on the
 * caller's thread-local storage (errno included) and on a stack of ours. Where
 * such a task cannot be made (a seccomp filter the profiler knows of, RLIMIT_NPROC, a kernel
 * that refuses, Valgrind), fn runs in place and its descriptors are briefly the program's, as
 * docs/internals.md says. While it lives the task is one of its user's under RLIMIT_NPROC: the
 * program's pthread_create and fork never fail for it. Runs inside malloc: no malloc. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mf_internal.h"

enum { MF_APART_STACK = 32 << 10 };

static _Alignas(64) unsigned char mf_apart_stack[MF_APART_STACK];
static pthread_mutex_t mf_apart_lock = PTHREAD_MUTEX_INITIALIZER;
static int mf_apart_off;     /* a task could not be made: fn runs in place from now on */
static int mf_apart_closed;  /* a seccomp filter may forbid what fn does: it never runs */
static int mf_apart_closing; /* filters being installed that may forbid it (their answer waited) */
static MF_TLS int mf_apart_installing; /* (by this thread) */
/* this thread's fn is running (in a task or in place); volatile, for the task reads it on the
 * caller's thread-local storage behind clone(), where the compiler sees no reader */
static MF_TLS volatile int mf_apart_inside;

struct mf_apart_call {
	long (*fn)(void *);
	void *arg;
	long ret;
};

static int mf_apart_kept[4] = {-1, -1, -1, -1}; /* descriptors of ours in the program's table */

void mf_fds_apart_keep(int old, int fd)
{
	for (int i = 0; i < 4; i++)
		if (mf_apart_kept[i] == old) {
			mf_apart_kept[i] = fd;
			return;
		}
}

static int mf_apart_is_kept(int fd)
{
	for (int i = 0; i < 4; i++)
		if (mf_apart_kept[i] == fd)
			return 1;
	return 0;
}

/* fn opens at most MF_APART_FDS descriptors at once. A copy of a table without that many free
 * slots (the program near RLIMIT_NOFILE) gets them: its highest descriptors, not ours, are
 * closed in the copy only. The program's files stay open in its own table (and its POSIX locks
 * held: they belong to that table). (Every file in the copy, closed here or when the task
 * ends, sees a flush: a FUSE, NFS or CIFS file may answer it with a write-back; docs/internals.md.)
 */
enum { MF_APART_FDS = 3 };

static void mf_apart_room(void)
{
	int probe[MF_APART_FDS], got = 0;
	while (got < MF_APART_FDS && (probe[got] = open("/", O_PATH | O_CLOEXEC)) >= 0)
		got++;
	int full = got < MF_APART_FDS && errno == EMFILE;
	for (int i = 0; i < got; i++)
		close(probe[i]);
	struct rlimit lim;
	if (!full || getrlimit(RLIMIT_NOFILE, &lim) || lim.rlim_cur > INT_MAX)
		return;
	for (int fd = (int)lim.rlim_cur - 1; fd >= 0 && got < MF_APART_FDS; fd--)
		if (!mf_apart_is_kept(fd) && close(fd) == 0)
			got++;
}

/* Can fn run in place? Only while the process has one thread (glibc's own flag, which its
 * thread creation clears for good): no other thread can then open a file while a descriptor
 * of ours is in the table, and a signal handler cannot either, with every signal blocked;
 * and only if the table has room for fn's descriptors. */
static int mf_apart_in_place(void)
{
	if (!__libc_single_threaded)
		return 0;
	int probe[MF_APART_FDS], got = 0;
	while (got < MF_APART_FDS && (probe[got] = open("/", O_PATH | O_CLOEXEC)) >= 0)
		got++;
	for (int i = 0; i < got; i++)
		close(probe[i]);
	return got == MF_APART_FDS;
}

/* The caller waits on the word the kernel clears when the task lets go of the memory
 * (CLONE_CHILD_CLEARTID, as pthread_join does), in a futex wait that a tracer can stop: a
 * vfork's wait (CLONE_VFORK) cannot be stopped, so a debugger that attached while a task ran
 * (malloc_freq --attach and --detach run gdb) and stopped the task waited for ever for the
 * caller to stop. The caller goes on before the task has left
 * the process (it still drops its table and leaves the thread group): for a while after, the
 * process has a thread more, and unshare() or setns() that need it alone would fail. Waiting
 * for that at each task would make every task wait for the scheduler under load, so the last
 * task is waited for where it matters: before the next task (by then it is gone: one system
 * call), and before the program's unshare() and setns(). */
static int mf_apart_last; /* the last task's thread id, while it may not have left */
/* For the program's thread starts: the tasks made (counted before clone) and those known to
 * have left the process (or not made); a task is alive while they differ. */
static unsigned mf_apart_made, mf_apart_gone;

int mf_fds_apart_settle(void)
{
	int tid = __atomic_load_n(&mf_apart_last, __ATOMIC_ACQUIRE);
	if (!tid)
		return 0;
	int saved = errno;
	pid_t pid = getpid();
	/* (bounded in time, not in yields, which a loaded machine can use up before the task has
	 * run again to leave: 2 s; a number reused by a new thread of the program must not hold
	 * the caller for ever) */
	uint64_t start = mf_clock_ns(CLOCK_MONOTONIC), now;
	for (unsigned i = 1; syscall(SYS_tgkill, pid, tid, 0) == 0; i++) {
		if (i % 256 == 0 && (now = mf_clock_ns(CLOCK_MONOTONIC)) &&
		    now - start > 2000000000u)
			break;
		sched_yield();
	}
	if (__atomic_compare_exchange_n(&mf_apart_last, &tid, 0, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		__atomic_add_fetch(&mf_apart_gone, 1, __ATOMIC_ACQ_REL); /* (once for each task) */
	errno = saved;
	return 1;
}

static int mf_apart_alive(void)
{
	return __atomic_load_n(&mf_apart_made, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&mf_apart_gone, __ATOMIC_ACQUIRE);
}

/* A task is one of its user's tasks under RLIMIT_NPROC from clone() until it has left: the
 * program's own thread start, one short of the limit, fails meanwhile with EAGAIN. Waiting for
 * each task before its caller goes on would not help a thread start in another thread while
 * the task runs, and no count of the user's tasks is cheap enough to tell when the limit is
 * near; so a thread start that fails while a task of ours was alive is made again once the
 * task has left, as if it had come that much later (at most 100 times). fork() waits for the
 * last task in its prepare handler (fork.c), and no task is made during a fork. */
MF_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
			     void *arg)
{
	static int (*next)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!__atomic_load_n(&next, __ATOMIC_ACQUIRE)) {
		int saved = errno;
		__atomic_store_n(&next, dlsym(RTLD_NEXT, "pthread_create"), __ATOMIC_RELEASE);
		errno = saved;
	}
	for (int i = 0;; i++) {
		unsigned gone = __atomic_load_n(&mf_apart_gone, __ATOMIC_ACQUIRE);
		unsigned made = __atomic_load_n(&mf_apart_made, __ATOMIC_ACQUIRE);
		int r = next(thread, attr, start, arg);
		if (r != EAGAIN || i == 100 ||
		    (made == gone && __atomic_load_n(&mf_apart_made, __ATOMIC_ACQUIRE) == made))
			return r;
		for (int j = 0; j < 100000 && mf_apart_alive(); j++) {
			mf_fds_apart_settle();
			sched_yield();
		}
	}
}

static int mf_apart_task(void *p)
{
	struct mf_apart_call *c = p;
	mf_apart_room();
	c->ret = c->fn(c->arg);
	return 0;
}

void mf_fds_apart_off(void)
{
	__atomic_store_n(&mf_apart_off, 1, __ATOMIC_RELAXED);
}

void mf_fds_apart_init(void)
{
	int saved = errno;
	if (prctl(PR_GET_SECCOMP) != 0) /* a filter came with the process: clone may be one */
		mf_fds_apart_off();	/* it does not allow */
	/* Valgrind runs the program on a simulated CPU that makes only the clone()s threads and
	 * fork make, and ends the process at any other: its own library in LD_PRELOAD says so. */
	const char *preload = getenv("LD_PRELOAD");
	if (preload && strstr(preload, "/vgpreload_"))
		mf_fds_apart_off();
	errno = saved;
}

void mf_fds_apart_close_begin(void)
{
	mf_apart_installing++;
	__atomic_add_fetch(&mf_apart_closing, 1, __ATOMIC_SEQ_CST);
}

void mf_fds_apart_close_end(int installed)
{
	if (installed)
		__atomic_store_n(&mf_apart_closed, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&mf_apart_closing, 1, __ATOMIC_SEQ_CST);
	mf_apart_installing--;
}

/* While a filter is being installed: the installing thread's own fn (a signal handler's step)
 * does not run, as it may come after the filter is in place; another thread's waits for the
 * kernel's answer (bounded: a handler of the installing thread may wait for a lock it holds). */
static int mf_apart_wait_closing(void)
{
	if (mf_apart_installing)
		return -1;
	for (int i = 0; i < 100000 && __atomic_load_n(&mf_apart_closing, __ATOMIC_SEQ_CST); i++)
		sched_yield();
	return __atomic_load_n(&mf_apart_closing, __ATOMIC_SEQ_CST) ? -1 : 0;
}

long mf_fds_apart(long (*fn)(void *), void *arg)
{
	if (__atomic_load_n(&mf_apart_closing, __ATOMIC_SEQ_CST) && mf_apart_wait_closing())
		return -EPERM;
	if (__atomic_load_n(&mf_apart_closed, __ATOMIC_SEQ_CST))
		return -EPERM;
	if (mf_apart_inside || __atomic_load_n(&mf_apart_off, __ATOMIC_RELAXED))
		return fn(arg); /* (nested: already apart, or in place) */
	int saved = errno;
	struct mf_apart_call c = {fn, arg, 0};
	uint64_t all = ~0ull, old;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8); /* the task's mask: all */
	if (mf_apart_in_place()) {
		mf_apart_inside = 1;
		c.ret = fn(arg);
		mf_apart_inside = 0;
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
		errno = saved;
		return c.ret;
	}
	pthread_mutex_lock(&mf_apart_lock);
	mf_fds_apart_settle(); /* (at most one task has not left) */
	mf_apart_inside = 1;
	__atomic_add_fetch(&mf_apart_made, 1, __ATOMIC_ACQ_REL);
	static volatile int running; /* (under the lock: the task's, cleared by the kernel) */
	running = 1;
	int tid = clone(mf_apart_task, mf_apart_stack + sizeof(mf_apart_stack),
			CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
			    CLONE_CHILD_CLEARTID,
			&c, NULL, NULL, &running);
	int err = errno;
	if (tid > 0) {
		while (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &running, FUTEX_WAIT, 1, NULL, NULL, 0);
		__atomic_store_n(&mf_apart_last, tid, __ATOMIC_RELEASE);
	} else {
		__atomic_add_fetch(&mf_apart_gone, 1, __ATOMIC_ACQ_REL);
	}
	mf_apart_inside = 0;
	pthread_mutex_unlock(&mf_apart_lock);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
	if (tid < 0) {
		if (err != EAGAIN) /* (EAGAIN: the thread limit, for now) */
			mf_fds_apart_off();
		mf_apart_inside = 1;
		c.ret = fn(arg);
		mf_apart_inside = 0;
	}
	errno = saved;
	return c.ret;
}

/* A fork waits for the last task to leave (the child is a task of the user's too), and no task
 * is made until it is done: the lock is held across it. */
void mf_fds_apart_prefork(void)
{
	pthread_mutex_lock(&mf_apart_lock);
	mf_fds_apart_settle();
}

void mf_fds_apart_postfork_parent(void)
{
	pthread_mutex_unlock(&mf_apart_lock);
}

void mf_fds_apart_postfork_child(void)
{
	mf_apart_last = 0; /* (a thread of the parent's) */
	mf_apart_gone = mf_apart_made;
	mf_apart_closing = mf_apart_installing; /* (the parent's other threads' are not here) */
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	memcpy(&mf_apart_lock, &fresh, sizeof(fresh));
	mf_apart_inside = 0;
}
