/* Stack capture's one entry point: the trie leaf of an allocation call's stack. A call from
 * one of the thread's hot stacks is counted at that stack's leaf; any other is walked by
 * the cached rules (or, where they cannot describe a frame, by libunwind) and found in the trie
 * from its outermost frame. MALLOC_FREQ_UNWIND picks libunwind for every call, or check mode,
 * which takes every stack both ways and says where they differ. Runs inside malloc. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fork.h"
#include "thread.h"
#include "unwind/internal.h"

void mf_unwind_init(void)
{
	mf_rule_table_init();
	mf_rules_init();
	if (mf_config.unwind != MF_UNWIND_CACHED || !mf_rules_complete())
		mf_libunwind_load();
}

void mf_unwind_thread_init(struct mf_unwind_thread *u)
{
	u->hot.arena = u->hot_arena;
	u->hot.scratch = u->hot_scratch;
	u->generation = mf_modules_generation;
}

void mf_unwind_thread_end(struct mf_unwind_thread *u)
{
	mf_hot_free(&u->hot);
}

/* Is a dlopen of the program watched below its frame at sp (rebind.c)? That frame of ours
 * stands in the stacks of the loader's allocations: it is left out, as the entry point's. */
static inline int mf_unwind_watched(uintptr_t sp)
{
	return mf_unlikely(mf_rebind_watched) && sp < mf_rebind_watched;
}

/* Leaves out libmalloc_freq's own frames (innermost, and watched: all) and ends at the first
 * address that cannot be code; then puts the rest outermost first. Returns the new count. */
static int mf_unwind_trim(void **pcs, int n, int watched)
{
	int skip = 0, k = 0;
	while (skip < n && mf_modules_is_self((uintptr_t)pcs[skip]))
		skip++;
	for (int i = skip; i < n && (uintptr_t)pcs[i] >= MF_TRIE_KEY_SPECIAL_MAX; i++)
		if (!watched || !mf_modules_is_self((uintptr_t)pcs[i]))
			pcs[k++] = pcs[i];
	for (int i = 0; i < k / 2; i++) {
		void *x = pcs[i];
		pcs[i] = pcs[k - 1 - i];
		pcs[k - 1 - i] = x;
	}
	return k;
}

/* unw_backtrace's stack, as mf_unwind_trim leaves it; 0 frames without libunwind. */
static int mf_unwind_slow(void **pcs, int max, int watched)
{
	int n = mf_libunwind_backtrace(pcs, max);
	n = n < 0 ? 0 : mf_unwind_trim(pcs, n, watched);
#if defined(__aarch64__)
	/* A stack made by makecontext starts at __start_context: glibc's makecontext puts its
	 * address (a nop no unwind table covers, before the function) in x30 and 0 in x29.
	 * libunwind (1.6) steps from there to the same address and gives the frame twice; the
	 * cached walk ends there, at x29's 0. The frame is the stack's once. */
	struct mf_cfi_rule rule;
	if (n >= 2 && pcs[0] == pcs[1] && mf_cfi_find((uintptr_t)pcs[0] - 1, &rule) != 0) {
		memmove(pcs, pcs + 1, (size_t)(n - 1) * sizeof(*pcs));
		n--;
	}
#endif
	return n;
}

static unsigned long mf_checked, mf_checked_walked, mf_checked_differ, mf_checked_hot;

/* MALLOC_FREQ_UNWIND=check: the stack (outermost first) must be unw_backtrace's, as far as
 * it is recorded: its innermost MALLOC_FREQ_DEPTH frames, and whether there are more.
 * (unw_backtrace spends more of max on our own frames, so it may see fewer beyond those.) */
static void mf_unwind_check(void **pcs, int n, void **ref, int max, int walked, int watched)
{
	int m = mf_unwind_slow(ref, max, watched);
	int depth = (int)mf_config.depth, i = 0;
	while (i < n && i < m && i < depth && pcs[n - 1 - i] == ref[m - 1 - i])
		i++;
	int same = i == depth ? (n > depth) == (m > depth) : i == n && i == m;
	__atomic_add_fetch(&mf_checked, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&mf_checked_walked, walked, __ATOMIC_RELAXED);
	if (!same && __atomic_fetch_add(&mf_checked_differ, 1, __ATOMIC_RELAXED) < 20)
		mf_log(
		    "unwind check: frame %d differs: cached walk %lx (of %d frames), libunwind %lx "
		    "(of %d)",
		    i, i < n ? (unsigned long)pcs[n - 1 - i] : 0ul, n,
		    i < m ? (unsigned long)ref[m - 1 - i] : 0ul, m);
}

/* MALLOC_FREQ_UNWIND=check: the leaf a hot stack gave, against the checked walk's. */
static void mf_unwind_check_hot(uint32_t hot, uint32_t walked)
{
	__atomic_add_fetch(&mf_checked_hot, 1, __ATOMIC_RELAXED);
	if (hot != walked && __atomic_fetch_add(&mf_checked_differ, 1, __ATOMIC_RELAXED) < 20)
		mf_log("unwind check: hot stack at leaf %u, the walk's at leaf %u", hot, walked);
}

/* Captures the program's return addresses from frame `from` outwards and returns how many:
 * *pcs points at them, outermost first, without libmalloc_freq's own frames; the capture ends
 * at the first address that cannot be code. *hash is their mf_stack_hash_step fold, or 0 if
 * not known. max bounds the raw capture, our frames included. */
static int mf_unwind_capture(struct mf_unwind_thread *u, int max, const struct mf_frame *from,
			     void ***at, uint64_t *hash, int *cut)
{
	struct mf_walk_stacks *ws = &u->ws;
	*hash = 0;
	*cut = 0;
	ws->cut = 0;
	*at = (void **)ws->fresh_pc;
	if (mf_unlikely(mf_loader_stuck))
		return 0; /* libunwind would wait in dl_iterate_phdr for ever */
	int n, walked = 0, watched = mf_unwind_watched(from->sp);
	if (mf_unlikely(mf_config.unwind != MF_UNWIND_CACHED))
		mf_fork_hold(); /* libunwind */
	if (mf_unlikely(mf_config.unwind == MF_UNWIND_LIBUNWIND) && !mf_tls.loader_held)
		n = MF_WALK_SLOW;
	else if ((n = mf_walk(ws, max, from->pc, from->sp, from->bp)) == MF_WALK_BOUNDS) {
		/* (once: where the mapping cannot be read, no guess is made) */
		if (mf_stack_bounds(ws->bounds_sp, &ws->stack_lo, &ws->stack_hi))
			ws->stack_lo = ws->stack_hi = MF_WALK_NO_BOUNDS;
		n = mf_walk(ws, max, from->pc, from->sp, from->bp);
		if (ws->stack_lo != MF_WALK_NO_BOUNDS && !mf_stack_own(ws->stack_lo, ws->stack_hi))
			ws->stack_lo = ws->stack_hi = 0; /* (this walk's only) */
	}
	walked = n >= 0;
	void **pcs = (void **)ws->pc;
	/* The walk starts at the entry point's frame: ours, and the only one. */
	if (mf_likely(n >= 2) && mf_modules_is_self((uintptr_t)pcs[n - 1]) &&
	    mf_likely(!mf_modules_is_self((uintptr_t)pcs[n - 2]))) {
		*at = pcs;
		*hash = ws->f[n - 2].hash;
		n--;
		if (mf_unlikely(watched)) { /* (into the scratch array: the walk keeps pcs) */
			int k = 0;
			for (int i = 0; i < n; i++)
				if (!mf_modules_is_self((uintptr_t)pcs[i]))
					ws->fresh_pc[k++] = (uintptr_t)pcs[i];
			if (k < n)
				*at = (void **)ws->fresh_pc, *hash = 0, n = k;
		}
	} else { /* (or a walk that ended oddly: libunwind then says what the stack is) */
		walked = 0;
		mf_fork_hold();
		if (!mf_tls.loader_held)
			mf_rules_needed(); /* the next run cannot do without libunwind either */
		n = mf_unwind_slow(*at, max, watched);
		/* Without libunwind in this run, or while the thread holds the loader's lock: the
		 * frames walked, marked as cut (a signal frame, say, on a stack the rule cache had
		 * not seen). */
		if (n == 0 && !walked && ws->cut > 0 &&
		    (n = mf_unwind_trim(*at, ws->cut, watched)) > 0)
			*cut = 1;
	}
	if (mf_unlikely(mf_config.unwind == MF_UNWIND_CHECK) && !mf_tls.loader_held)
		mf_unwind_check(*at, n, u->check, max, walked, watched);
	return n;
}

/* The leaf of a stack that is not one of the thread's hot ones (or is, and check mode
 * compares): capture, walk the trie from the outermost frame, and keep the stack among the
 * hot ones if it came again. 0: the trie is out of room. The slow path: errno is kept here. */
static MF_NOINLINE uint32_t mf_unwind_walk(struct mf_unwind_thread *u, struct mf_trie *t,
					   enum mf_entry e, const struct mf_frame *from,
					   uint32_t hot)
{
	int saved = errno;
	if (mf_unlikely(u->generation != mf_modules_generation)) {
		mf_trie_forget_index(t); /* an unloaded object's pcs may be reused */
		u->generation = mf_modules_generation;
		u->nodes_known = 0;
	}
	int depth = (int)mf_config.depth;
	void **pcs;
	uint64_t hash;
	/* depth + our own frames + 1 to see that a stack was cut */
	int cut;
	int frames = mf_unwind_capture(u, depth + 16, from, &pcs, &hash, &cut);
	int truncated = frames > depth || cut;
	if (mf_unlikely(truncated)) { /* the innermost depth frames, and a marker */
		if (frames > depth) {
			pcs += frames - depth;
			frames = depth;
		}
		hash = 0;
	}
	/* The outer frames the walk kept from the stack before have the nodes they had. */
	int known = hash && u->ws.kept < u->nodes_known ? u->ws.kept : u->nodes_known;
	if (!hash)
		known = 0;
	uint32_t node =
	    mf_trie_stack(t, pcs, frames, truncated, MF_TRIE_KEY_ENTRY(e), hash, u->nodes, &known);
	u->nodes_known = hash ? known : 0;
	if (mf_unlikely(!node))
		;
	else if (mf_unlikely(hot))
		mf_unwind_check_hot(hot, node);
	/* Walked whole (hash is set only when the cached walk gave the stack, never under
	 * MALLOC_FREQ_UNWIND=libunwind), and counted before: a stack that comes again, not one
	 * of the one-off stacks a short process is made of (each would touch a page here). Not
	 * if an unload was noticed since the index was checked: the walk may be of the new
	 * epoch, the leaf of the index about to be forgotten. */
	else if (hash && u->ws.reusable && t->nodes[node].calls &&
		 u->generation == __atomic_load_n(&mf_modules_generation, __ATOMIC_ACQUIRE))
		mf_hot_put(&u->hot, &u->ws, node, from);
	errno = saved;
	return node;
}

void mf_unwind_hot_drop(struct mf_unwind_thread *u)
{
	mf_hot_drop(&u->hot);
	u->nodes_known = 0;
}

MF_NOINLINE uint32_t mf_unwind_leaf(struct mf_unwind_thread *u, struct mf_trie *t, enum mf_entry e,
				    const struct mf_frame *from)
{
	/* (MALLOC_FREQ_UNWIND=check looks among the hot stacks, then walks and compares;
	 * under MALLOC_FREQ_UNWIND=libunwind there are none) Not again where the hot path just
	 * looked and found none: a walk cost that second look for nothing. (A flag left by a
	 * call that ended elsewhere, or left for good, only makes one call walk.) */
	uint32_t hot = u->hot.missed ? 0 : mf_hot_find(&u->hot, from, mf_walk_epoch_now());
	u->hot.missed = 0;
	if (hot && mf_config.unwind == MF_UNWIND_CACHED)
		return hot;
	return mf_unwind_walk(u, t, e, from, hot);
}

void mf_unwind_forget(void)
{
	/* (libunwind first: a thread that sees the new epoch learns its rules from libunwind's
	 * new cache generation) */
	mf_libunwind_forget();
	mf_rule_table_forget();
}

void mf_unwind_postfork_child(void)
{
	mf_rule_table_postfork_child();
}

void mf_unwind_exit(void)
{
	if (mf_config.unwind == MF_UNWIND_CHECK)
		mf_log("unwind check: %lu stacks compared, %lu by the cached walk, %lu differed; "
		       "%lu found among the hot stacks",
		       mf_checked, mf_checked_walked, mf_checked_differ, mf_checked_hot);
	mf_rules_save();
}
