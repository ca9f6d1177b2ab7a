/* libunwind, the slow and sure way to a stack: the only file that includes <libunwind.h>.
 * Loaded with dlopen at start (never later: see mf_libunwind_load); used to confirm a rule
 * (one step from a frame) and to take the stacks that rules cannot describe (unw_backtrace).
 * Runs inside malloc: its allocations are the profiler's own (mf_real_own). */
#include "config.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "thread.h"
#include "unwind/internal.h"

/* libunwind's functions, set once it is loaded. */
#define MF_UNW_NAME_(f) #f
#define MF_UNW_NAME(f)                                                                             \
	MF_UNW_NAME_(f) /* the exported name: unw_step is _ULx86_64_step, _ULaarch64_step */
static struct {
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*backtrace)(void **, int);
	int (*getcontext)(unw_context_t *);
	int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
	void (*flush_cache)(unw_addr_space_t, unw_word_t, unw_word_t);
	unw_addr_space_t *local_addr_space;
} mf_unw;
static int mf_unw_state;     /* 1: loaded; 0: not in this run */
static int mf_unw_trace_off; /* unw_backtrace's frames are not return addresses: not used */
#if MF_ARCH_UNW_GETCONTEXT_DLSYM
#define MF_UNW_GETCONTEXT(uc) mf_unw.getcontext(uc)
#else
#define MF_UNW_GETCONTEXT(uc) unw_tdep_getcontext(uc)
#endif

/* Is unw_backtrace's answer made of return addresses, as unw_step's and the cached walk's?
 * Before 1.5 its fast trace gives each caller's return address less one (the call's last
 * byte). Asked for this function's caller, whose return address is known here. */
static MF_NOINLINE int mf_libunwind_trace_exact(void)
{
	void *pcs[2];
	int n = mf_unw.backtrace(pcs, 2);
	return n == 2 && pcs[1] == __builtin_return_address(0);
}

/* dlopen, dlsym, then the GOT patches; 0 or -1 (said on stderr). */
static int mf_libunwind_open(void)
{
	void *h = dlopen(MF_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	const char *missing = NULL;
#define MF_UNW_RESOLVE(member, fn)                                                                 \
	if (h && !missing && !(*(void **)&mf_unw.member = dlsym(h, MF_UNW_NAME(fn))))              \
		missing = MF_UNW_NAME(fn);
	MF_UNW_RESOLVE(init_local, unw_init_local)
	MF_UNW_RESOLVE(step, unw_step)
	MF_UNW_RESOLVE(get_reg, unw_get_reg)
	MF_UNW_RESOLVE(backtrace, unw_backtrace)
	if (MF_ARCH_UNW_GETCONTEXT_DLSYM) /* (unw_getcontext is a macro of it) */
		MF_UNW_RESOLVE(getcontext, unw_tdep_getcontext)
	MF_UNW_RESOLVE(set_caching_policy, unw_set_caching_policy)
	MF_UNW_RESOLVE(flush_cache, unw_flush_cache)
	MF_UNW_RESOLVE(local_addr_space, unw_local_addr_space)
#undef MF_UNW_RESOLVE
	if (!h || missing) {
		const char *why = dlerror(); /* (read, so that the program does not find it) */
		why = h ? missing : why;
		mf_log("cannot load %s (%s%s); frame rules are used without libunwind's "
		       "confirmation, and a stack they cannot describe is counted without its "
		       "frames",
		       MF_LIBUNWIND_SONAME, h ? "no symbol " : "", why ? why : "?");
		return -1;
	}
	mf_got_patch_libunwind();
	/* Starts libunwind (its pipe2 now ours); asks for per-thread caches, which Debian's build
	 * does not have (it keeps one global cache). */
	mf_unw.set_caching_policy(*mf_unw.local_addr_space, UNW_CACHE_PER_THREAD);
	/* (libunwind before 1.5: its stacks are then taken by unw_step, frame by frame, which is
	 * slower but exact; nothing is said, as the program's stderr is the program's) */
	mf_unw_trace_off = !mf_libunwind_trace_exact();
	return 0;
}

void mf_libunwind_load(void)
{
	/* Only at start: loading later would be done inside an allocation, perhaps while another
	 * thread's dlopen holds the loader's lock and waits for a lock that this thread holds. */
	if (__atomic_load_n(&_r_debug.r_state, __ATOMIC_ACQUIRE) != RT_CONSISTENT)
		return; /* the loader is mid-change: a dlopen inside would fail its assertions */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	mf_tls.own++; /* the loader's allocations are the profiler's, not the program's */
	int ok = mf_libunwind_open() == 0;
	mf_tls.own--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&mf_unw_state, ok, __ATOMIC_RELEASE);
}

static MF_TLS int mf_unw_warm; /* libunwind's thread-local block exists in this thread */

/* Loaded with dlopen, libunwind has its thread-local variables in a block that glibc
 * allocates, with malloc, at a thread's first use of them: made to happen here, with every
 * signal blocked, as the profiler's own allocation (mf_real_own). */
static void mf_libunwind_warm_thread(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	mf_tls.own++;
	void *pc[1];
	mf_unw.backtrace(pc, 1);
	mf_tls.own--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	mf_unw_warm = 1;
}

/* Can libunwind be called now? (Then this thread's block exists.) If it was not loaded, the
 * rule cache hears that this run needed it, so that the next one loads it. Never while the
 * thread holds the loader's lock: another thread may hold libunwind's and wait for it. */
static int mf_libunwind_ready(void)
{
	if (mf_unlikely(mf_tls.loader_held))
		return 0;
	if (mf_likely(mf_unw_warm))
		return 1;
	if (!__atomic_load_n(&mf_unw_state, __ATOMIC_ACQUIRE)) {
		mf_rules_needed();
		return 0;
	}
	mf_libunwind_warm_thread();
	return 1;
}

/* 1 + the walk's epoch when this thread first gave unw_backtrace a stack; 0: not yet. */
static MF_TLS uint64_t mf_unw_traced_in;

/* unw_backtrace's answer, by unw_step from a fresh cursor, as unw_backtrace itself does when
 * its trace fails: each frame found through the register-state cache, which
 * mf_libunwind_forget empties. (Out of line: its context and cursor stay off the stack of
 * mf_libunwind_backtrace's usual path.) */
static MF_NOINLINE int mf_libunwind_step_all(void **pcs, int max)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_word_t ip;
	int n = 0;
	if (MF_UNW_GETCONTEXT(&uc) < 0 || mf_unw.init_local(&c, &uc) < 0)
		return 0;
	while (n < max && mf_unw.step(&c) > 0 && !mf_unw.get_reg(&c, UNW_REG_IP, &ip))
		pcs[n++] = (void *)ip;
	return n;
}

int mf_libunwind_backtrace(void **pcs, int max)
{
	if (!mf_libunwind_ready())
		return -1;
	/* unw_backtrace answers from a per-thread trace cache, by return address, that nothing
	 * empties: not unw_flush_cache (libunwind 1.6.2: after dlclose, then dlopen of another
	 * library at the same address, it kept describing the first library's frame, and gave
	 * stacks without their outer frames or crashed reading through them). So once code may
	 * have been unloaded since this thread first used it, its stacks are stepped instead.
	 * (The warming call traced only our own frames, which stay.) */
	uint64_t now = 1 + (uint64_t)mf_walk_epoch_now();
	if (mf_unlikely(!mf_unw_traced_in))
		mf_unw_traced_in = now;
	if (mf_likely(mf_unw_traced_in == now) && mf_likely(!mf_unw_trace_off))
		return mf_unw.backtrace(pcs, max);
	return mf_libunwind_step_all(pcs, max);
}

void mf_libunwind_forget(void)
{
	/* libunwind's register-state caches (one per thread: UNW_CACHE_PER_THREAD), by address,
	 * would describe the unloaded code's frames to unw_step, which confirms rules: the flush
	 * starts a new cache generation, and each thread empties its cache when it next finds
	 * it of an older one. Documented as thread-safe and safe in a signal handler; it does
	 * not allocate (1.6.2: it unmaps what it read of .debug_frame sections). */
	if (__atomic_load_n(&mf_unw_state, __ATOMIC_ACQUIRE))
		mf_unw.flush_cache(*mf_unw.local_addr_space, 0, 0);
}

int mf_unwind_agrees(uintptr_t pc, uintptr_t sp, uintptr_t bp, const struct mf_cfi_rule *r)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_word_t nip, nsp, nbp;
	if (mf_unlikely(!mf_libunwind_ready()))
		return -1;
	memset(&uc, 0, sizeof(uc));
	MF_ARCH_UC_FRAME(uc, pc, sp, bp);
	if (mf_unw.init_local(&c, &uc) < 0) /* pc is taken as a return address, as here */
		return 0;
	int step = mf_unw.step(&c);
	if (r->kind == MF_CFI_END)
		return step == 0; /* (an error may be passing: such a frame is left to libunwind) */
	if (r->kind != MF_CFI_STEP || step <= 0 || mf_unw.get_reg(&c, UNW_REG_IP, &nip) ||
	    mf_unw.get_reg(&c, UNW_REG_SP, &nsp) || mf_unw.get_reg(&c, MF_ARCH_UNW_BP, &nbp))
		return 0;
	/* libunwind read the return address below the CFA, and the saved rbp between the two
	 * stack pointers: reading them again here is safe once the CFA is the same. */
	if ((r->cfa_rbp ? bp : sp) + (uintptr_t)r->cfa_off != nsp ||
	    mf_ra_strip(*(const uintptr_t *)(nsp + r->ra_off)) != nip)
		return 0;
	if (!r->rbp_off)
		return bp == nbp;
	uintptr_t at = nsp + (uintptr_t)(intptr_t)r->rbp_off;
	return at >= sp && *(const uintptr_t *)at == nbp;
}
