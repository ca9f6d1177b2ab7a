/* A program that confines itself with seccomp, through prctl(PR_SET_SECCOMP) or the seccomp
 * system call (through syscall(), glibc having no wrapper, or syscall(SYS_prctl)).
 *
 * A filter: before it is installed, it is read (safely: a pointer the kernel would refuse with
 * EFAULT is the kernel's to refuse) and run (bpf.c) on each system call the profiler's slow steps
 * make: if one would be killed, trapped or traced (or its fate depends on its arguments, which
 * are not known in advance), or the filter cannot be read, the profiler stops touching files
 * once the kernel has installed it: what it recorded stays in the files already mapped;
 * threads started later and stacks beyond their file's room are counted as not recorded. An
 * install the kernel refuses changes nothing. Calls a filter answers with an errno simply
 * fail, as the profiler expects of them.
 *
 * Strict mode (the calling thread only; it can make no thread or child): from then on the
 * thread may make no system call but read, write, exit and sigreturn, and may not read a clock
 * (the kernel may disable the time-stamp counter, which the vDSO reads). The profiler makes
 * none there: the thread's calls are counted as not recorded in the process record, its file
 * is left as it was, and ended in memory when the thread ends by exit(2) or by returning.
 *
 * Both entry points pass every call straight to the kernel (syscall() after unshare's and
 * setns's wait for the descriptor task, fds_apart.c). */
#include "config.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "cpu_clock.h"
#include "fork.h"
#include "life/life.h"
#include "mf_internal.h"
#include "thread.h"

/* The system call as glibc's syscall() makes it: -1 and errno for an error. */
static long mf_raw_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	long r = mf_arch_syscall(n, a, b, c, d, e, f);
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* ---- Strict mode: the calling thread's state ---- */

MF_TLS int mf_confined;
static MF_TLS pid_t mf_confined_pid;
static MF_TLS uint64_t mf_confined_ns; /* CLOCK_REALTIME as it entered strict mode */
static MF_TLS char mf_confined_name[MF_THREAD_NAME_LEN];
static MF_TLS struct mf_prof_header *mf_confined_file; /* the thread's, or NULL */

pid_t mf_confine_pid(void)
{
	return mf_unlikely(mf_confined) ? mf_confined_pid : getpid();
}

void mf_confine_count(size_t bytes)
{
	mf_tls.last_record = &mf_leaf_none; /* (counted at no leaf) */
	mf_process_unrecorded(bytes);
}

void mf_confine_end(void)
{
	struct mf_prof_header *h = mf_confined_file;
	mf_confined_file = NULL;
	if (!h || __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != MF_STATE_RECORDING)
		return;
	memcpy(h->thread_name, mf_confined_name, sizeof(h->thread_name));
	h->end_ns = mf_confined_ns; /* (the last time it could read a clock) */
	__atomic_store_n(&h->state, MF_STATE_THREAD_EXIT, __ATOMIC_RELEASE);
}

/* Before the thread asks for strict mode (how: the program's way), while it may still make
 * system calls: what it cannot learn afterwards, and the process record that its calls will be
 * counted in (made now if no thread has recorded yet). Then it is taken to be in strict mode,
 * so that a signal handler's call as the kernel returns from granting it makes no system call
 * (mf_confine_strict_end undoes this if the kernel refuses). */
static void mf_confine_strict_begin(const char *how)
{
	int saved = errno;
	mf_confined_pid = getpid();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	mf_confined_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	memset(mf_confined_name, 0, sizeof(mf_confined_name));
	mf_raw_syscall(SYS_prctl, PR_GET_NAME, (long)mf_confined_name, 0, 0, 0, 0);
	/* (the file as profile_file.c maps it: the header, then the nodes; in a child made
	 * without fork()'s handlers, none: the thread's state is its parent's until then) */
	mf_thread_current();
	mf_confined_file = mf_tls.thread && mf_tls.nodes
			       ? (struct mf_prof_header *)((char *)mf_tls.nodes - MF_HEADER_SIZE)
			       : NULL;
	if (mf_config.dir[0] && !mf_tls.fork_held && !mf_tls.recording && !mf_thread_refused()) {
		int cancel = mf_nocancel_begin();
		mf_busy_enter();
		mf_fork_hold();
		mf_prof_dir_ensure(); /* (a failure is said there) */
		mf_fork_release();
		mf_busy_leave();
		mf_nocancel_end(cancel);
	}
	if (!mf_interpose_failed()) /* (a library that records nothing has nothing to say) */
		MF_LOG_ONCE("thread %d asks for seccomp strict mode (%s), where the profiler may "
			    "make no system call: once in it, its calls are counted as not "
			    "recorded, and its file ends with it (said once)",
			    (int)gettid(), how);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_confined = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	errno = saved;
}

/* The kernel granted strict mode, or refused it. Granted: the thread's state is dropped from
 * its calls (they take the slow path, which counts them), and a snapshot finds its file idle
 * from now on. No system call. */
static void mf_confine_strict_end(int granted)
{
	if (!granted) {
		mf_confined = 0;
		mf_confined_file = NULL;
		return;
	}
	mf_thread_quiet(1);
	mf_tls.thread = NULL;
	mf_tls.countdown = 0; /* (under sampling too, every call is counted) */
	mf_tls.last_block = NULL;
	mf_tls.last_record = &mf_leaf_none;
}

/* exit(2) in strict mode, the thread's one way out but being killed: its file ends, and the
 * process record with it if this was the process's only thread (glibc's flag: no thread was
 * ever made). */
static void mf_confine_exit(int status)
{
	mf_confine_end();
	if (__libc_single_threaded)
		mf_process_confined_exit(status & 0xff, mf_confined_ns);
}

/* ---- The wrappers ---- */

/* Did the kernel install the filter? (A seccomp() with TSYNC returns the id of a thread that
 * it could not synchronise, unless TSYNC_ESRCH; with NEW_LISTENER, a descriptor.) */
static int mf_confine_installed(long r, unsigned long flags)
{
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1ul << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1ul << 4)
#endif
	return r == 0 || (r > 0 && (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) &&
			  (!(flags & SECCOMP_FILTER_FLAG_TSYNC) ||
			   (flags & SECCOMP_FILTER_FLAG_TSYNC_ESRCH)));
}

/* System call nr (a to f), which asks for strict mode (strict) or installs the filter at fprog
 * with flags; how: the program's way. */
static long mf_confine_call(const char *how, int strict, const void *fprog, unsigned long flags,
			    long nr, long a, long b, long c, long d, long e, long f)
{
	int saved = errno, err = 0, closing = 0;
	if (mf_life_on) /* (first: the filter may kill or refuse membarrier, whatever bpf.c says) */
		mf_life_confine();
	if (strict) {
		mf_confine_strict_begin(how);
	} else if (!mf_bpf_allows(fprog, &err)) {
		mf_fds_apart_close_begin();
		closing = 1;
		/* (one the kernel refuses changes nothing: not said; nor by a library that
		 * records nothing) */
		if (err != EFAULT && !mf_interpose_failed())
			MF_LOG_ONCE(
			    "the program installs a seccomp filter (%s) that %s: once it is "
			    "in place, the profiler makes no file; threads started later "
			    "and new stacks beyond their file's room are counted as not "
			    "recorded",
			    how,
			    err ? "the profiler cannot read"
				: "could kill the profiler's file steps");
	}
	errno = saved;
	long r = mf_raw_syscall(nr, a, b, c, d, e, f);
	saved = errno;
	if (strict)
		mf_confine_strict_end(r == 0);
	else if (closing)
		mf_fds_apart_close_end(mf_confine_installed(r, flags));
	errno = saved;
	return r;
}

MF_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
		      a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_TSC && a2 == PR_TSC_SIGSEGV)
		mf_cpu_clock_no_tsc(); /* (before: the clock reads the counter) */
	if (option == PR_SET_SECCOMP && !mf_confined &&
	    (a2 == SECCOMP_MODE_STRICT || a2 == SECCOMP_MODE_FILTER))
		return (int)mf_confine_call("prctl", a2 == SECCOMP_MODE_STRICT, (const void *)a3, 0,
					    SYS_prctl, option, (long)a2, (long)a3, (long)a4,
					    (long)a5, 0);
	return (int)mf_raw_syscall(SYS_prctl, option, (long)a2, (long)a3, (long)a4, (long)a5, 0);
}

/* unshare or setns, which may need the process to be one thread: the profiler's last task
 * (fds_apart.c) must have left it first. For a moment after it has, its share of the signal
 * handlers is still counted, and the kernel refuses an unshare that takes them (CLONE_SIGHAND,
 * or CLONE_THREAD or CLONE_VM, which imply it) with EINVAL, as it would while the task was
 * there: asked again then, for at most 100 ms. */
static long mf_confine_alone(long number, long a, long b, long c, long d, long e, long f)
{
	int waited = mf_fds_apart_settle();
	long r = mf_raw_syscall(number, a, b, c, d, e, f);
	uint64_t start, now;
	if (!waited || r != -1 || errno != EINVAL || !(start = mf_clock_ns(CLOCK_MONOTONIC)))
		return r;
	do {
		sched_yield();
		r = mf_raw_syscall(number, a, b, c, d, e, f);
	} while (r == -1 && errno == EINVAL && (now = mf_clock_ns(CLOCK_MONOTONIC)) &&
		 now - start < 100000000u);
	return r;
}

MF_EXPORT long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long),
	     e = va_arg(ap, long), f = va_arg(ap, long);
	va_end(ap);
	if (mf_unlikely(mf_confined)) { /* (strict mode: nothing but the call) */
		if (number == SYS_exit)
			mf_confine_exit((int)a);
		return mf_raw_syscall(number, a, b, c, d, e, f);
	}
	/* (strict mode as the kernel grants it: SECCOMP_SET_MODE_STRICT with no flags and no
	 * argument; prctl's ignores its third) */
	if (number == SYS_seccomp && a == SECCOMP_SET_MODE_STRICT && !b && !c)
		return mf_confine_call("seccomp", 1, NULL, 0, number, a, b, c, d, e, f);
	if (number == SYS_seccomp && a == SECCOMP_SET_MODE_FILTER)
		return mf_confine_call("seccomp", 0, (const void *)c, (unsigned long)b, number, a,
				       b, c, d, e, f);
	if (number == SYS_prctl && a == PR_SET_SECCOMP &&
	    (b == SECCOMP_MODE_STRICT || b == SECCOMP_MODE_FILTER))
		return mf_confine_call("prctl", b == SECCOMP_MODE_STRICT, (const void *)c, 0,
				       number, a, b, c, d, e, f);
	if (number == SYS_prctl && a == PR_SET_TSC && b == PR_TSC_SIGSEGV)
		mf_cpu_clock_no_tsc();
	if (number == SYS_unshare || number == SYS_setns)
		return mf_confine_alone(number, a, b, c, d, e, f);
	return mf_raw_syscall(number, a, b, c, d, e, f);
}
