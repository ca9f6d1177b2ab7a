/* The allocation entry points and the library's only constructor and destructor. Each entry
 * point counts its call once, then calls the next allocator; a call made while another runs in
 * the same thread is a signal handler's (counted apart when it interrupts the profiler).
 * Runs inside malloc: no malloc, no stdio, errno preserved. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fork.h"
#include "life/life.h"
#include "loaded.h"
#include "malloc_freq.h"
#include "mf_internal.h"
#include "thread.h"

/* MF_INIT_ASIDE: another copy of the library was loaded first and records; this one only
 * passes every call on (no file, no thread, no handler, no line on stderr). */
enum { MF_INIT_NONE, MF_INIT_RUNNING, MF_INIT_DONE, MF_INIT_FAILED, MF_INIT_ASIDE };
static int mf_init_state;
static MF_TLS int mf_init_here; /* this thread runs mf_init */

/* Whether the kernel's pages are the size lib/ is laid out for (MF_PAGE_SIZE); if not, says so.
 * With larger pages its mprotect and madvise calls would fail or reach past their memory
 * (seen under qemu-user with 16 and 64 KiB pages: the program killed by SIGSEGV at start),
 * so the library then records nothing and passes every call on. */
static int mf_pages_fit(void)
{
	long page = getpagesize();
	if (page == MF_PAGE_SIZE)
		return 1;
	mf_log("this kernel's pages are %ld bytes, and malloc_freq works only with %u-byte pages; "
	       "not recording",
	       page, MF_PAGE_SIZE);
	return 0;
}

static MF_NOINLINE void mf_init(void)
{
	int expected = MF_INIT_NONE, was_here = mf_init_here;
	/* (set while the state says RUNNING by this thread: a signal handler's call of the API or
	 * dlclose in this thread must not wait for the start it interrupted) */
	mf_init_here = 1;
	if (!__atomic_compare_exchange_n(&mf_init_state, &expected, MF_INIT_RUNNING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		mf_init_here = was_here;
		return; /* another thread is initializing: this call is served but not recorded */
	}
	mf_log_init();
	/* What the loader allocates meanwhile is the profiler's: glibc before 2.34 allocates each
	 * thread's dlerror state at its first dlsym, and any glibc the message of a look-up that
	 * fails. Reached from a recorded call (a library's constructor that allocates before ours
	 * runs), such a call was otherwise taken for that call left by longjmp, its state cleared,
	 * and a later allocation inside the profiler recorded again on its own stack. */
	mf_tls.own++;
	/* Whether another copy of the library comes first, before any look-up: those allocate
	 * (each thread's dlerror state at its first dlsym, before glibc 2.34), and a copy's
	 * allocation reaches the first copy's entry points, which would take it for the
	 * program's. Found first, the walk's own look-up starts the first copy, as the program's
	 * first call would. */
	int first = mf_real_first_copy(), state = MF_INIT_FAILED;
	if (mf_real_init() == 0)
		state = !first ? MF_INIT_ASIDE : mf_pages_fit() ? MF_INIT_DONE : MF_INIT_FAILED;
	if (state == MF_INIT_DONE) {
		mf_config_load();
		mf_control_init();
		mf_fds_apart_init();
		mf_loader_init();
		mf_objects_init();
		mf_loader_alloc_take();
		mf_modules_init();
		mf_unwind_init();
		mf_thread_init();
		mf_fork_init();
		mf_real_say_shadowed();
	}
	mf_tls.own--;
	__atomic_store_n(&mf_init_state, state, __ATOMIC_RELEASE);
	mf_init_here = 0;
}

static int mf_aside(void)
{
	return __atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_ASIDE;
}

static MF_NOINLINE struct mf_thread *mf_enter_slow(void)
{
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_NONE)
		mf_init();
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) != MF_INIT_DONE)
		return NULL;
	return mf_thread_start();
}

/* Whether no call of this thread can start recording: the profiler could not start, or the
 * thread or process stopped recording (a directory that cannot be made, no memory, the thread
 * ending). Such calls then take no slow step: no lock, no system call (two a call before). */
static int mf_sample_refused(void)
{
	int state = __atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE);
	return state == MF_INIT_FAILED || state == MF_INIT_ASIDE ||
	       (state == MF_INIT_DONE && mf_thread_refused());
}

/* A thread's first call (or a call of a thread that does not record). */
static MF_NOINLINE struct mf_thread *mf_sample_first(void)
{
	int saved = errno;
	if (mf_unlikely(mf_control_child))
		mf_control_child_start();
	if (mf_sample_refused()) {
		/* (aside, or failed for good: the countdown never ends, each call passes by) */
		if (mf_aside() || mf_interpose_failed())
			mf_tls.countdown = LONG_MAX;
		errno = saved;
		return NULL;
	}
	mf_fork_hold();
	int cancel = mf_nocancel_begin();
	struct mf_thread *t = mf_enter_slow();
	/* A new thread's first countdown counts this call too: sampled only if it is 1. */
	if (t && --mf_tls.countdown > 0)
		t = NULL;
	mf_nocancel_end(cancel);
	errno = saved;
	return t;
}

struct mf_sample_call {
	struct mf_thread *t;
	const struct mf_frame *from;
	size_t bytes;
	enum mf_entry e;
};

static long mf_sample_record(void *arg)
{
	const struct mf_sample_call *c = arg;
	mf_thread_record(c->t, c->e, c->bytes, c->from);
	return 0;
}

/* A call that is not from one of the thread's hot stacks, the thread's first, or any call
 * while recording is off (mf_wiped.gate): recorded on the thread's own stack, or counted as off. */
static MF_NOINLINE void mf_sample_slow(const struct mf_frame *from, size_t bytes, enum mf_entry e)
{
	uint64_t cancel = MF_SIGNAL_CANCEL, mask;
	if (mf_unlikely(mf_confined)) { /* (seccomp strict mode: no system call) */
		mf_confine_count(bytes);
		return;
	}
	if (mf_unlikely(__atomic_load_n(
		&mf_detached,
		__ATOMIC_RELAXED))) { /* (a call through a pointer taken while attached) */
		mf_tls.last_record = &mf_leaf_none;
		return;
	}
	if (mf_unlikely(mf_tls.cancel_async)) /* (its slow steps change the trie and the memo) */
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &cancel, &mask, 8);
	mf_tls.loader_held = mf_loader_held(from->sp);
	struct mf_thread *t = mf_thread_current();
	mf_tls.last_record = &mf_leaf_none; /* (until the call is counted at a leaf) */
	if (!t)
		t = mf_sample_first();
	if (t && mf_unlikely(__atomic_load_n(&mf_wiped.gate, __ATOMIC_RELAXED) & MF_GATE_HOLD))
		mf_thread_hold(t); /* (before anything of this call is written) */
	if (t && mf_unlikely(mf_control_off())) {
		mf_thread_count_off(t);
	} else if (t) {
		struct mf_sample_call c = {t, from, bytes, e};
		mf_thread_on_stack(t, mf_sample_record, &c);
	} else if (mf_tls.thread == NULL) { /* (not one the countdown passed over) */
		mf_process_unrecorded(bytes);
	}
	if (mf_unlikely(mf_tls.fork_held))
		mf_fork_release();
	mf_tls.loader_held = 0;
	if (mf_unlikely(mf_tls.cancel_async))
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, 8);
}

/* Is the call this thread was recording still running (a signal handler interrupted it and
 * allocates), or did a handler leave it for good with siglongjmp? A handler runs below the
 * frame it interrupted, on the same stack (the program's, or the thread's own of the slow
 * steps), or on a signal stack; and while the call runs, its frame holds the return address
 * into the entry point. (No lock can be held then: locks are taken with signals blocked.) */
enum { MF_NEST_MARGIN = 1024 };

static int mf_entry_running(void)
{
	const struct mf_frame *f = mf_tls.entry;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	stack_t ss;
	if (!f || mf_thread_on_own_stack(mf_tls.thread, here))
		return 1; /* (the profiler's own work, or a slow step's) */
	/* At the recorded call's depth or above it, on the same stack: it is gone. The depth is
	 * where its frame f lies (in its entry point's frame), not what f holds: a call left for
	 * good left f in memory that this very call's frames may have written over. (This call's
	 * own frames, up from its entry point, take less than MF_NEST_MARGIN; a handler's call lies
	 * below the kernel's signal frame, which takes more.) */
	if (here + MF_NEST_MARGIN >= (uintptr_t)f &&
	    (sigaltstack(NULL, &ss) || !(ss.ss_flags & SS_ONSTACK)))
		return 0;
	return mf_modules_is_self(f->pc); /* (f lies above this call's frames: it can be read) */
}

/* A call made while the profiler itself runs in this thread: its own (served by mf_real_own;
 * signals are blocked then), or a signal handler's that interrupted it while the trie is
 * mid-update (counted apart, then served as usual). Returns 1 for the profiler's own, 0 for a
 * handler's. If the recorded call was left for good, the thread records again, from this
 * call on: -1. */
static MF_NOINLINE int mf_enter_nested(size_t bytes)
{
	if (mf_tls.own)
		return 1;
	if (mf_unlikely(mf_confined)) /* (seccomp strict mode: no sigaltstack) */
		return mf_confine_count(bytes), 0;
	if (!mf_entry_running()) {
		mf_tls.recording = 0;
		mf_tls.entry = NULL;
		return -1; /* (recorded as any call) */
	}
	mf_thread_count_nested();
	return 0;
}

/* (apart: the common path needs no more registers) */
static MF_NOINLINE void *mf_returned_life(void *p, size_t n)
{
	mf_life_alloc(p, n);
	return p;
}

/* The profiler's own calloc (see mf_enter): apart, so that the entry point's common path is
 * as without it. */
static MF_NOINLINE void *mf_own_calloc(size_t n, size_t m)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return mf_real_own(0, total, 1);
}

/* n * m, or 0 when it overflows (the call then fails and requests nothing) */
static size_t mf_product(size_t n, size_t m)
{
	size_t r;
	return __builtin_mul_overflow(n, m, &r) ? 0 : r;
}

/* ---- The hot path: one allocation call, from its entry point to its counter ----
 * malloc asks mf_passed first: under sampling most calls end there, with a jump to the next
 * allocator. Otherwise mf_malloc_noted enters (mf_enter: the countdown), and a call it chooses
 * is recorded (mf_sample): a call from one of the thread's hot stacks by mf_sample_hot, which
 * finds its leaf (mf_hot_find, lib/unwind/hot.c) and counts it there; any other by
 * mf_sample_slow, above. Then the next allocator serves it and its block is noted
 * (mf_returned). What it touches: thread.h (mf_tls, struct mf_thread, mf_wiped). */
static MF_INLINE int mf_passed(void);
static MF_NOINLINE void *mf_malloc_noted(size_t n);
static MF_NOINLINE void *mf_calloc_noted(size_t n, size_t m);
static MF_INLINE int mf_enter(enum mf_entry e, size_t bytes);
static MF_INLINE void mf_sample(enum mf_entry e, size_t bytes, uintptr_t caller);
static MF_INLINE int mf_sample_hot(struct mf_thread *t, size_t bytes, const struct mf_frame *from);
static MF_INLINE void *mf_returned(void *p, size_t n);

MF_EXPORT void *malloc(size_t n)
{
	if (mf_likely(mf_passed()))
		return mf_real.alloc.malloc(n);
	return mf_malloc_noted(n);
}

MF_EXPORT void *calloc(size_t n, size_t m)
{
	if (mf_likely(mf_passed()))
		return mf_real.alloc.calloc(n, m);
	return mf_calloc_noted(n, m);
}

/* malloc's and calloc's way past mf_enter, for most calls under sampling: the countdown
 * passes over the call (not within the profiler), and nothing is to be noted of its block:
 * the thread's last block is none (no leaf's temporary, as mf_enter's mf_leaf_none makes it;
 * nor tracked with lifetimes on, as mf_life_alloc leaves it) and the entry point jumps to the
 * next allocator, with no frame of its own. Otherwise the countdown is left for mf_enter. */
static inline __attribute__((always_inline)) int mf_passed(void)
{
	if (mf_tls.countdown <= 1 || mf_nonzero(mf_tls.recording))
		return 0;
	/* (one instruction: a signal handler's calls between the test and it count, and a
	 * countdown its last call reset is not overwritten with the one read before) */
	(void)mf_count_down(&mf_tls.countdown);
	mf_tls.last_block = NULL;
	return 1;
}

/* malloc and calloc past mf_passed, apart from the entry points so that these have no frame
 * of their own; each entered by a jump, so it stands where its entry point stood: its frame
 * is the one mf_sample takes (MF_FRAME_HERE), and the frame above it the program's. */
static MF_NOINLINE void *mf_malloc_noted(size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_MALLOC, n)))
		return mf_real_own(0, n, 0);
	return mf_returned(mf_real.alloc.malloc(n), n);
}

static MF_NOINLINE void *mf_calloc_noted(size_t n, size_t m)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_CALLOC, mf_product(n, m))))
		return mf_own_calloc(n, m);
	return mf_returned(mf_real.alloc.calloc(n, m), mf_product(n, m));
}

/* (mf_count_down(n): --*n <= 0, in the fewest instructions: lib/arch/) */

/* Every entry point starts here, then calls the next allocator and notes the block it returns
 * (mf_returned; a signal handler's call meanwhile is recorded like any other). Returns 1 when
 * the call is the profiler's own, to be served by mf_real_own. A call the countdown passes
 * over is counted nowhere: its block is no leaf's temporary.
 * (No entry point reaches another through us: reallocarray is done here with realloc.) */
static inline __attribute__((always_inline)) int mf_enter(enum mf_entry e, size_t bytes)
{
	int nested;
	if (mf_unlikely(mf_nonzero(mf_tls.recording)) && (nested = mf_enter_nested(bytes)) >= 0)
		return nested;
	/* sampled out: one subtract in memory and a branch */
	if (mf_unlikely(mf_count_down(&mf_tls.countdown)))
		mf_sample(e, bytes, (uintptr_t)__builtin_return_address(0));
	else
		mf_tls.last_record = &mf_leaf_none;
	return 0;
}

/* A call the countdown chose (every call without sampling): record it, from the entry point's
 * frame where this is inlined (MF_FRAME_HERE; the caller is its return address). The hot path
 * touches no errno and makes no call; the slow one keeps errno. (The frame is kept in memory,
 * in the entry point's, for mf_entry_running, the slow path, and the hot stacks, which check
 * the entry point frame's rbp where it lies there (see mf_hot_put); the hot path compares the
 * rest as it came, in registers, without reading it back.)
 * While recording, the thread notes its frame, for mf_entry_running; a signal handler's call
 * recorded in between (before the thread is marked) puts back the frame it found. */
static inline __attribute__((always_inline)) void mf_sample(enum mf_entry e, size_t bytes,
							    uintptr_t caller)
{
	struct mf_frame from;
	MF_FRAME_HERE(from);
	from.caller = caller;
	const struct mf_frame came = from;
	__asm__("" : "+m"(from)); /* (in memory, read from there) */
	const struct mf_frame *outer = mf_tls.entry;
	mf_tls.entry = &from;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_tls.recording++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	struct mf_thread *t = mf_tls.thread;
	if (mf_unlikely(t == NULL) || mf_unlikely(!mf_sample_hot(t, bytes, &came)))
		mf_sample_slow(&from, bytes, e);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_tls.recording--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_tls.entry = outer;
}

/* A call from one of the thread's hot stacks (its words all hold what they held: mf_hot_find)
 * whose size bucket the leaf record holds already: counted at its leaf. 0 if it is not one,
 * with nothing done (mf_sample_slow then counts it). mf_wiped.hot holds the walk's epoch and
 * the gate above it: while any gate is set no hot stack is found. */
static inline __attribute__((always_inline)) int mf_sample_hot(struct mf_thread *t, size_t bytes,
							       const struct mf_frame *from)
{
	uint32_t node =
	    mf_hot_find(&t->unwind.hot, from, __atomic_load_n(&mf_wiped.hot, __ATOMIC_ACQUIRE));
	if (mf_unlikely(!node))
		return 0;
	struct mf_node *leaf = &t->trie.nodes[node];
	struct mf_leaf *x = (struct mf_leaf *)(leaf + 1);
	if (mf_likely(x->size_key[0] == MF_SIZE_BUCKET(bytes) + 1)) {
		x->size_count[0]++; /* (most stacks request sizes of one bucket: the first) */
	} else {
		uint64_t slot = mf_leaf_size_slot(x, bytes);
		if (mf_unlikely(!slot))
			return 0;
		x->size_count[(unsigned)__builtin_ctzll(slot) >> 3]++;
	}
	uint64_t calls = ++t->file.header->calls_total;
	leaf->calls++;
	leaf->bytes += bytes;
	mf_tls.last_record = x;
	if (mf_unlikely(!(calls & (MF_TIMELINE_STEP - 1))))
		mf_thread_timeline_look(t);
	return 1;
}

/* The thread's last block: a temporary if freed before its next allocation call. */
static inline __attribute__((always_inline)) void *mf_returned(void *p, size_t n)
{
	mf_tls.last_block = p;
	/* (apart: the common path needs no more registers) */
	if (mf_unlikely(mf_nonzero(mf_life_on)))
		return mf_returned_life(p, n);
	return p;
}

/* The thread's last block before a realloc call (which counts itself at a leaf of its own,
 * and may grow the file): the block, and its record's place among the nodes. */
struct mf_last {
	void *block;
	ptrdiff_t record;
};
static inline __attribute__((always_inline)) struct mf_last mf_last_now(void)
{
	struct mf_last l = {mf_tls.last_block, -1};
	if (mf_tls.last_record && mf_tls.last_record != &mf_leaf_none)
		l.record = (struct mf_node *)mf_tls.last_record - mf_tls.nodes;
	return l;
}

/* realloc's old block is freed when the call succeeds, or shrinks it to nothing (glibc frees
 * it and returns NULL): a temporary if it was the thread's last block. */
static MF_NOINLINE void mf_realloc_freed_last(struct mf_last last)
{
	if (last.record >= 0 && mf_tls.nodes)
		mf_thread_temporary((struct mf_leaf *)(mf_tls.nodes + last.record));
}
static inline __attribute__((always_inline)) void *mf_reallocated(void *old, size_t n, void *p,
								  struct mf_last last)
{
	if (mf_unlikely(old == last.block) && old && (p || !n))
		mf_realloc_freed_last(last);
	mf_tls.last_block = p;
	return p;
}

/* realloc with lifetimes on: the old block leaves the map before the real call (which may
 * free it, and another thread be given its address and put it there at once), and comes
 * back if the call fails. */
static MF_NOINLINE void *mf_realloc_life(void *(*real)(void *, size_t), void *old, size_t n,
					 struct mf_last last)
{
	struct mf_life_slot held;
	int taken = old ? mf_life_realloc_take(old, &held) : -1;
	void *p = mf_reallocated(old, n, real(old, n), last);
	mf_life_realloc_done(taken, &held, p, n);
	return p;
}

MF_EXPORT void *realloc(void *old, size_t n)
{
	struct mf_last last = mf_last_now();
	if (mf_unlikely(mf_enter(MF_ENTRY_REALLOC, n)))
		return mf_real_own_realloc(old, n);
	if (mf_unlikely(mf_real_is_bootstrap(old)))
		return mf_returned(mf_real_move_bootstrap(old, n), n);
	if (mf_unlikely(mf_nonzero(mf_life_on)))
		return mf_realloc_life(mf_real.alloc.realloc, old, n, last);
	return mf_reallocated(old, n, mf_real.alloc.realloc(old, n), last);
}

/* As glibc does it, overflow check then realloc, the one glibc's would call (the first in the
 * lookup order: see mf_real.realloc_first); calling the real reallocarray instead would come
 * back through our realloc. */
MF_EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
	struct mf_last last = mf_last_now();
	int own = mf_enter(MF_ENTRY_REALLOCARRAY, mf_product(n, m));
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (mf_unlikely(own))
		return mf_real_own_realloc(old, total);
	if (mf_unlikely(mf_real_is_bootstrap(old)))
		return mf_returned(mf_real_move_bootstrap(old, total), total);
	if (mf_unlikely(mf_nonzero(mf_life_on)))
		return mf_realloc_life(mf_real.realloc_first, old, total, last);
	return mf_reallocated(old, total, mf_real.realloc_first(old, total), last);
}

MF_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_POSIX_MEMALIGN, n))) {
		void *p = mf_real_own(align, n, 0);
		return p ? (*out = p, 0) : ENOMEM;
	}
	int r = mf_real.alloc.posix_memalign(out, align, n);
	mf_returned(r ? NULL : *out, n);
	return r;
}

MF_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_ALIGNED_ALLOC, n)))
		return mf_real_own(align, n, 0);
	return mf_returned(mf_real.alloc.aligned_alloc(align, n), n);
}

MF_EXPORT void *memalign(size_t align, size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_MEMALIGN, n)))
		return mf_real_own(align, n, 0);
	return mf_returned(mf_real.alloc.memalign(align, n), n);
}

MF_EXPORT void *valloc(size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_VALLOC, n)))
		return mf_real_own(MF_PAGE_SIZE, n, 0);
	return mf_returned(mf_real.alloc.valloc(n), n);
}

MF_EXPORT void *pvalloc(size_t n)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_PVALLOC, n)))
		return mf_real_own(MF_PAGE_SIZE, n, 0);
	return mf_returned(mf_real.alloc.pvalloc(n), n);
}

/* A block of the bootstrap arena, or any with lifetimes on (apart, so that free's common path
 * needs no frame of its own; under sampling, a block the filter has not seen costs a hash and
 * a read). A bootstrap block is the profiler's own, made while it ran (libunwind's thread-local
 * storage on its first use, say), never recorded: its free, often the program's (glibc frees a
 * thread's storage at its end), is not of a block never seen. */
static MF_NOINLINE void mf_free_apart(void *p)
{
	if (mf_unlikely(mf_real_is_bootstrap(p))) {
		mf_real_free_bootstrap(p);
		return;
	}
	if (mf_life_on && p && mf_life_maybe(p))
		mf_life_free(p);
	mf_real.alloc.free(p);
}

/* The thread's last block freed before its next allocation: a temporary. */
MF_EXPORT void free(void *p)
{
	if (mf_unlikely(p == mf_tls.last_block) && p) {
		mf_tls.last_block = NULL;
		mf_thread_temporary(mf_tls.last_record);
	}
	if (mf_unlikely((uintptr_t)p - (uintptr_t)mf_free_apart_lo < mf_free_apart_span))
		mf_free_apart(p);
	else
		mf_real.alloc.free(p);
}

/* The entry points above by addresses that are this library's own (the lookup may find
 * another object's first), in mf_entry_own's order. */
#if __has_attribute(copy)
#define MF_OWN(name)                                                                               \
	extern __typeof(name) mf_alias_##name                                                      \
	    __attribute__((alias(#name), visibility("hidden"), copy(name)))
#else
#define MF_OWN(name)                                                                               \
	extern __typeof(name) mf_alias_##name __attribute__((alias(#name), visibility("hidden")))
#endif
MF_OWN(malloc);
MF_OWN(calloc);
MF_OWN(realloc);
MF_OWN(reallocarray);
MF_OWN(posix_memalign);
MF_OWN(aligned_alloc);
MF_OWN(memalign);
MF_OWN(valloc);
MF_OWN(pvalloc);
MF_OWN(free);
#undef MF_OWN
void *const mf_entry_own[MF_ENTRY_OWN_COUNT] = {
    (void *)mf_alias_malloc,	   (void *)mf_alias_calloc,	    (void *)mf_alias_realloc,
    (void *)mf_alias_reallocarray, (void *)mf_alias_posix_memalign, (void *)mf_alias_aligned_alloc,
    (void *)mf_alias_memalign,	   (void *)mf_alias_valloc,	    (void *)mf_alias_pvalloc,
    (void *)mf_alias_free};

/* The entry points of objects whose calls reach another allocator x (rebind.c: a library
 * opened with RTLD_DEEPBIND, an object of another namespace, every object when an allocator
 * is preloaded before the profiler): each records its call as the one above does, and
 * forwards it to x, which serves every block of those objects. Entered only by a jump from a
 * stub that puts x after the call's arguments, each stands where its entry point stood: its
 * frame is the one recorded, the object's call the frame above it. The profiler's own calls
 * (through libc's or libunwind's slots) go to x unrecorded, as they did before. */
#define MF_NEXT_ENTRY __attribute__((used, noinline, visibility("hidden")))

MF_NEXT_ENTRY void *mf_next_malloc(size_t n, const struct mf_allocator *x)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_MALLOC, n)))
		return x->malloc(n);
	return mf_returned(x->malloc(n), n);
}

MF_NEXT_ENTRY void *mf_next_calloc(size_t n, size_t m, const struct mf_allocator *x)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_CALLOC, mf_product(n, m))))
		return x->calloc(n, m);
	return mf_returned(x->calloc(n, m), mf_product(n, m));
}

static inline __attribute__((always_inline)) void *
mf_next_realloc_as(enum mf_entry e, void *old, size_t n, const struct mf_allocator *x)
{
	struct mf_last last = mf_last_now();
	if (mf_unlikely(mf_enter(e, n)))
		return x->realloc(old, n);
	if (mf_likely(!mf_nonzero(mf_life_on)))
		return mf_reallocated(old, n, x->realloc(old, n), last);
	struct mf_life_slot held; /* (as mf_realloc_life) */
	int taken = old ? mf_life_realloc_take(old, &held) : -1;
	void *p = mf_reallocated(old, n, x->realloc(old, n), last);
	mf_life_realloc_done(taken, &held, p, n);
	return p;
}

MF_NEXT_ENTRY void *mf_next_realloc(void *old, size_t n, const struct mf_allocator *x)
{
	return mf_next_realloc_as(MF_ENTRY_REALLOC, old, n, x);
}

MF_NEXT_ENTRY void *mf_next_reallocarray(void *old, size_t n, size_t m,
					 const struct mf_allocator *x)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		(void)mf_enter(MF_ENTRY_REALLOCARRAY, 0);
		errno = ENOMEM;
		return NULL;
	}
	return mf_next_realloc_as(MF_ENTRY_REALLOCARRAY, old, total, x);
}

MF_NEXT_ENTRY int mf_next_posix_memalign(void **out, size_t align, size_t n,
					 const struct mf_allocator *x)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_POSIX_MEMALIGN, n)))
		return x->posix_memalign(out, align, n);
	int r = x->posix_memalign(out, align, n);
	mf_returned(r ? NULL : *out, n);
	return r;
}

MF_NEXT_ENTRY void *mf_next_aligned_alloc(size_t align, size_t n, const struct mf_allocator *x)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_ALIGNED_ALLOC, n)))
		return x->aligned_alloc(align, n);
	return mf_returned(x->aligned_alloc(align, n), n);
}

MF_NEXT_ENTRY void *mf_next_memalign(size_t align, size_t n, const struct mf_allocator *x)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_MEMALIGN, n)))
		return x->memalign(align, n);
	return mf_returned(x->memalign(align, n), n);
}

MF_NEXT_ENTRY void *mf_next_valloc(size_t n, const struct mf_allocator *x)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_VALLOC, n)))
		return x->valloc(n);
	return mf_returned(x->valloc(n), n);
}

MF_NEXT_ENTRY void *mf_next_pvalloc(size_t n, const struct mf_allocator *x)
{
	if (mf_unlikely(mf_enter(MF_ENTRY_PVALLOC, n)))
		return x->pvalloc(n);
	return mf_returned(x->pvalloc(n), n);
}

MF_NEXT_ENTRY void mf_next_free(void *p, const struct mf_allocator *x)
{
	if (mf_unlikely(p == mf_tls.last_block) && p) {
		mf_tls.last_block = NULL;
		mf_thread_temporary(mf_tls.last_record);
	}
	if (mf_unlikely(mf_nonzero(mf_life_on)) && p && mf_life_maybe(p))
		mf_life_free(p);
	x->free(p);
}

/* Unloading code changes the module map and invalidates pcs. (dlopen is not wrapped: glibc
 * takes its caller's RUNPATH and namespace from the return address, which would be ours; a
 * newly loaded object is found when one of its addresses is first met.) */
/* The library started if nothing started it yet (errno kept), then waited for while another
 * thread starts it: its state then. This thread's own start is not waited for (a call made
 * inside it, or a signal handler's that interrupted it: for ever): RUNNING then. */
static int mf_start_now(void)
{
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_NONE) {
		int saved = errno;
		mf_busy_enter();
		mf_init();
		mf_busy_leave();
		errno = saved;
	}
	int state;
	while ((state = __atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE)) == MF_INIT_RUNNING &&
	       !mf_init_here)
		sched_yield();
	return state;
}

/* The real dlclose is known once the start is done. This thread's own start reached here (its
 * lookups allocate, and the call reached another copy of the library, whose start walks the
 * loaded objects through this one): the call passes through to the loader. */
static void mf_dl_begin(void)
{
	if (mf_start_now() == MF_INIT_RUNNING)
		mf_real_init_dl();
}

/* A thread that may be cancelled at any instruction (a program that allocates then needs an
 * allocator that allows it): its slow steps, which change its trie and memo and take locks,
 * run with cancellation's signal blocked; its hot path only adds to counts. */
MF_EXPORT int pthread_setcanceltype(int type, int *old)
{
	if (!mf_real.pthread_setcanceltype)
		*(void **)&mf_real.pthread_setcanceltype =
		    dlsym(RTLD_NEXT, "pthread_setcanceltype");
	if (type == PTHREAD_CANCEL_ASYNCHRONOUS)
		mf_tls.cancel_async = 1; /* (before cancellation can come) */
	int r = mf_real.pthread_setcanceltype(type, old);
	if (r == 0 && type != PTHREAD_CANCEL_ASYNCHRONOUS)
		mf_tls.cancel_async = 0;
	return r;
}

MF_EXPORT int dlclose(void *handle)
{
	if (mf_unlikely(mf_confined)) /* (one that unloads is killed at its munmap anyway) */
		return mf_real.dlclose(handle);
	mf_dl_begin();
	mf_unwind_forget(); /* its code may be unmapped, and other code mapped there */
	int r = mf_real.dlclose(handle);
	mf_unwind_forget();
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

/* While a thread is inside dl_iterate_phdr it holds the loader's lock: its callback's calls are
 * recorded by slow steps that know it (mf_loader_held), with nothing to undo when the callback
 * is left by longjmp or a throw. */
MF_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	if (mf_unlikely(!mf_real.dl_iterate_phdr))
		mf_dl_begin();
	return mf_loader_iterate(mf_real.dl_iterate_phdr, cb, arg);
}

int mf_interpose_aside(void)
{
	return mf_aside();
}

int mf_interpose_started(void)
{
	return __atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_DONE;
}

int mf_interpose_failed(void)
{
	return __atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_FAILED;
}

int mf_interpose_api(void)
{
	int state = mf_start_now();
	/* (still running: a signal handler's call that interrupted this thread's start, which
	 * is answered as if the library had not started) */
	return state == MF_INIT_FAILED || state == MF_INIT_RUNNING ? -1 : 0;
}

MF_EXPORT const char *malloc_freq_dir(void)
{
	return mf_prof_dir();
}

/* glibc calls constructors with the program's arguments. errno is the program's as it was:
 * main starts with what the loader and the constructors before ours left in it. */
__attribute__((constructor)) static void mf_constructor(int argc, char **argv)
{
	int saved = errno;
	mf_busy_enter();
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_NONE)
		mf_init();
	mf_tls.own++; /* what dlsym or on_exit allocate is the profiler's, not the program's */
	mf_process_init(argc, argv, !mf_aside());
	mf_tls.own--;
	mf_busy_leave();
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) == MF_INIT_DONE) {
		mf_attach_start();
		mf_control_start();
		mf_rebind_init();
	}
	errno = saved;
}

__attribute__((destructor)) static void mf_destructor(void)
{
	/* (exit() in seccomp strict mode: the kernel kills the thread at exit_group) */
	if (__atomic_load_n(&mf_init_state, __ATOMIC_ACQUIRE) != MF_INIT_DONE || mf_confined ||
	    __atomic_load_n(&mf_detached, __ATOMIC_ACQUIRE))
		return; /* (detached: the files are final) */
	/* errno as the program left it, for the exit handlers and destructors after ours */
	int saved = errno;
	mf_busy_enter();
	mf_snapshot_exit();
	if (mf_life_on)
		mf_life_exit();
	mf_thread_process_exit();
	mf_process_exit();
	mf_unwind_exit();
	mf_busy_leave();
	errno = saved;
}
