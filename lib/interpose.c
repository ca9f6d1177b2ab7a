/* The allocation entry points and the library's only constructor and destructor. Each entry
 * point counts its call once, then calls the next allocator; a call made while another runs in
 * the same thread is a signal handler's (counted apart when it interrupts the profiler).
 * Runs inside malloc: no malloc, no stdio, errno preserved. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "malloc_freq.h"
#include "mf_internal.h"

enum { MF_INIT_NONE, MF_INIT_RUNNING, MF_INIT_DONE, MF_INIT_FAILED };
static int mf_init_state;

static MF_NOINLINE void mf_init(void)
{
	int expected = MF_INIT_NONE;
	if (!__atomic_compare_exchange_n(&mf_init_state, &expected, MF_INIT_RUNNING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return; /* another thread is initializing: this call is served but not recorded */
	int ok = mf_real_init() == 0;
	if (ok) {
		mf_config_load();
		mf_walk_init();
		mf_loader_init();
		mf_modules_init();
		mf_rules_init();
		mf_unwind_init();
		mf_thread_init();
	}
	__atomic_store_n(&mf_init_state, ok ? MF_INIT_DONE : MF_INIT_FAILED, __ATOMIC_RELEASE);
}

static MF_NOINLINE struct mf_thread *mf_enter_slow(void)
{
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_NONE)
		mf_init();
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) != MF_INIT_DONE)
		return NULL;
	return mf_thread_start();
}

/* A call the countdown chose (every call without sampling): record it. Entered through
 * mf_sample_here(), which gives it the entry point's frame to start unwinding from. */
void mf_sample(enum mf_entry e, size_t bytes, uintptr_t pc, uintptr_t sp, uintptr_t bp,
	       uintptr_t caller) __attribute__((visibility("hidden"), used));
void mf_sample(enum mf_entry e, size_t bytes, uintptr_t pc, uintptr_t sp, uintptr_t bp,
	       uintptr_t caller)
{
	const struct mf_frame from = {pc, sp, bp, caller};
	int saved = errno;
	mf_tls.recording++;
	struct mf_thread *t = mf_tls.thread;
	/* A new thread's first countdown counts this call too: sampled only if it is 1. */
	if (mf_unlikely(!t)) {
		mf_fork_hold();
		int cancel = mf_nocancel_begin();
		if ((t = mf_enter_slow()) && --mf_tls.countdown > 0)
			t = NULL;
		mf_nocancel_end(cancel);
	}
	if (mf_likely(t != NULL))
		mf_thread_record(t, e, bytes, &from);
	if (mf_unlikely(mf_tls.fork_held))
		mf_fork_release();
	mf_tls.recording--;
	errno = saved;
}

void mf_sample_here(enum mf_entry e, size_t bytes, void *caller)
    __attribute__((visibility("hidden")));
MF_WITH_CALLER_FRAME(mf_sample_here, mf_sample);

/* Every entry point starts here; mf_leave() must follow the real call. Returns 1 when the call
 * is the profiler's own, to be served by mf_real_own (only while it runs: known at the branch
 * that already tells nested calls apart). */
static inline __attribute__((always_inline)) int mf_enter(enum mf_entry e, size_t bytes)
{
	/* Another entry point is running in this thread: a signal handler interrupted it. While
	 * the profiler itself runs, the trie is mid-update: count the call apart (unless the
	 * profiler made it: signals are blocked then). While the real allocator runs, the
	 * profiler is idle: record the call like any other. (No entry point reaches another
	 * through us: reallocarray is done here with realloc.) */
	if (mf_unlikely(mf_tls.depth++ != 0) && mf_tls.recording) {
		if (mf_unlikely(mf_tls.own))
			return 1;
		mf_thread_count_nested();
		return 0;
	}
	if (mf_likely(--mf_tls.countdown > 0))
		return 0; /* sampled out: one decrement, one branch */
	mf_sample_here(e, bytes, __builtin_return_address(0));
	return 0;
}

static inline __attribute__((always_inline)) void mf_leave(void)
{
	mf_tls.depth--;
}

/* The profiler's own allocation (see mf_enter), then mf_leave(); apart, so that the entry
 * points' common path is as without it. */
static MF_NOINLINE void *mf_own(size_t align, size_t n, int zero)
{
	void *p = mf_real_own(align, n, zero);
	mf_leave();
	return p;
}
static MF_NOINLINE void *mf_own_calloc(size_t n, size_t m)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		mf_leave();
		errno = ENOMEM;
		return NULL;
	}
	return mf_own(0, total, 1);
}
static MF_NOINLINE void *mf_own_realloc(void *old, size_t n)
{
	void *p = mf_real_own_realloc(old, n);
	mf_leave();
	return p;
}

/* n * m, or 0 when it overflows (the call then fails and requests nothing) */
static size_t mf_product(size_t n, size_t m)
{
	size_t r;
	return __builtin_mul_overflow(n, m, &r) ? 0 : r;
}

MF_EXPORT void *malloc(size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_MALLOC, n)))
		return mf_own(0, n, 0);
	void *p = mf_real.malloc(n);
	mf_leave();
	return p;
}

MF_EXPORT void *calloc(size_t n, size_t m)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_CALLOC, mf_product(n, m))))
		return mf_own_calloc(n, m);
	void *p = mf_real.calloc(n, m);
	mf_leave();
	return p;
}

MF_EXPORT void *realloc(void *old, size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_REALLOC, n)))
		return mf_own_realloc(old, n);
	void *p = mf_unlikely(mf_real_is_bootstrap(old)) ? mf_real_move_bootstrap(old, n)
							 : mf_real.realloc(old, n);
	mf_leave();
	return p;
}

/* As glibc does it, overflow check then realloc; calling the real reallocarray instead would
 * come back through our realloc. */
MF_EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
	int own = mf_enter(MF_ENTRY_REALLOCARRAY, mf_product(n, m));
	size_t total;
	void *p = NULL;
	if (__builtin_mul_overflow(n, m, &total))
		errno = ENOMEM;
	else if (mf_unlikely(own))
		return mf_own_realloc(old, total);
	else if (mf_unlikely(mf_real_is_bootstrap(old)))
		p = mf_real_move_bootstrap(old, total);
	else
		p = mf_real.realloc(old, total);
	mf_leave();
	return p;
}

MF_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_POSIX_MEMALIGN, n))) {
		void *p = mf_own(align, n, 0);
		return p ? (*out = p, 0) : ENOMEM;
	}
	int r = mf_real.posix_memalign(out, align, n);
	mf_leave();
	return r;
}

MF_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_ALIGNED_ALLOC, n)))
		return mf_own(align, n, 0);
	void *p = mf_real.aligned_alloc(align, n);
	mf_leave();
	return p;
}

MF_EXPORT void *memalign(size_t align, size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_MEMALIGN, n)))
		return mf_own(align, n, 0);
	void *p = mf_real.memalign(align, n);
	mf_leave();
	return p;
}

MF_EXPORT void *valloc(size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_VALLOC, n)))
		return mf_own(4096, n, 0);
	void *p = mf_real.valloc(n);
	mf_leave();
	return p;
}

MF_EXPORT void *pvalloc(size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_PVALLOC, n)))
		return mf_own(4096, n, 0);
	void *p = mf_real.pvalloc(n);
	mf_leave();
	return p;
}

MF_EXPORT void free(void *p)
{
	if (mf_unlikely(mf_real_is_bootstrap(p)))
		mf_real_free_bootstrap(p);
	else
		mf_real.free(p);
}

/* Unloading code changes the module map and invalidates pcs. (dlopen is not wrapped: glibc
 * takes its caller's RUNPATH and namespace from the return address, which would be ours; a
 * newly loaded object is found when one of its addresses is first met.) */
static void mf_dl_begin(void)
{
	int state = __atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE);
	if (state == MF_INIT_NONE) {
		mf_busy_enter();
		mf_init();
		mf_busy_leave();
	}
	/* another thread is initializing: the real dlclose is known only once it is done */
	while (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_RUNNING)
		sched_yield();
}

MF_EXPORT int dlclose(void *handle)
{
	mf_dl_begin();
	mf_walk_forget(); /* its code may be unmapped, and other code mapped there */
	int r = mf_real.dlclose(handle);
	mf_walk_forget();
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_DONE) {
		int saved = errno, cancel = mf_nocancel_begin();
		mf_busy_enter();
		mf_fork_hold();
		mf_modules_refresh();
		mf_fork_release();
		mf_busy_leave();
		mf_nocancel_end(cancel);
		errno = saved;
	}
	return r;
}

/* While a thread is inside dl_iterate_phdr it holds the loader's lock; unwinding an allocation
 * made in its callback could wait for a lock (libunwind's) whose holder waits for the loader's.
 * Marked busy like the profiler's own work, such calls are counted, not unwound. */
MF_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	if (mf_unlikely(!mf_real.dl_iterate_phdr))
		mf_dl_begin();
	mf_busy_enter();
	int r = mf_real.dl_iterate_phdr(cb, arg);
	mf_busy_leave();
	return r;
}

/* _exit and _Exit end the process without exit()'s handlers: the process record says so
 * first. (A vfork child's call writes nothing: the record is its parent's.) */
static __attribute__((noreturn)) void mf_quick_exit(int status)
{
	mf_process_quick_exit(status);
	if (mf_process_real.exit)
		mf_process_real.exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

MF_EXPORT void _exit(int status)
{
	mf_quick_exit(status);
}

MF_EXPORT void _Exit(int status)
{
	mf_quick_exit(status);
}

/* The wait family: a child's end, as returned, goes into the child's process record (a child
 * killed by a signal cannot say so itself). The status is asked for even when the caller does
 * not want it. Before mf_process_init, the system call. */
static pid_t mf_waited(pid_t r, const int *status)
{
	if (r > 0)
		mf_process_reaped(r, *status);
	return r;
}

MF_EXPORT pid_t wait(int *status)
{
	int st, *s = status ? status : &st;
	return mf_waited(mf_process_real.wait ? mf_process_real.wait(s)
					      : (pid_t)syscall(SYS_wait4, -1, s, 0, NULL),
			 s);
}

MF_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	int st, *s = status ? status : &st;
	return mf_waited(mf_process_real.waitpid ? mf_process_real.waitpid(pid, s, options)
						 : (pid_t)syscall(SYS_wait4, pid, s, options, NULL),
			 s);
}

MF_EXPORT pid_t wait3(int *status, int options, struct rusage *usage)
{
	int st, *s = status ? status : &st;
	return mf_waited(mf_process_real.wait3 ? mf_process_real.wait3(s, options, usage)
					       : (pid_t)syscall(SYS_wait4, -1, s, options, usage),
			 s);
}

MF_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
	int st, *s = status ? status : &st;
	return mf_waited(mf_process_real.wait4 ? mf_process_real.wait4(pid, s, options, usage)
					       : (pid_t)syscall(SYS_wait4, pid, s, options, usage),
			 s);
}

MF_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	int r = mf_process_real.waitid ? mf_process_real.waitid(idtype, id, info, options)
				       : (int)syscall(SYS_waitid, idtype, id, info, options, NULL);
	if (r == 0 && !(options & WNOWAIT))
		mf_process_reaped_info(info);
	return r;
}

MF_EXPORT const char *malloc_freq_dir(void)
{
	return mf_prof_dir();
}

/* glibc calls constructors with the program's arguments. */
__attribute__((constructor)) static void mf_constructor(int argc, char **argv)
{
	mf_busy_enter();
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_NONE)
		mf_init();
	mf_tls.own++; /* what dlsym or on_exit allocate is the profiler's, not the program's */
	mf_process_init(argc, argv);
	mf_tls.own--;
	mf_busy_leave();
}

__attribute__((destructor)) static void mf_destructor(void)
{
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) != MF_INIT_DONE)
		return;
	mf_busy_enter();
	mf_thread_process_exit();
	mf_process_exit();
	mf_unwind_report();
	mf_rules_save();
	mf_busy_leave();
}
