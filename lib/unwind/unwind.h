/* Stack capture: what the rest of the library sees of lib/unwind/. Two entry points take the
 * frame of an allocation call and return the trie leaf of its stack: mf_hot_find, the hot
 * path's, finds one of the thread's hot stacks or nothing; mf_unwind_leaf chooses how to find
 * any (a hot stack's leaf, the cached walk, libunwind, or check mode's comparison of them).
 * Runs inside malloc: no malloc, no stdio, errno preserved. */
#ifndef MF_UNWIND_H
#define MF_UNWIND_H

#include <stdint.h>

#include "malloc_freq_format.h"

#define MF_DEPTH_DEFAULT 128
#define MF_DEPTH_MAX	 1024

struct mf_trie;

/* A frame as the cached walk sees it: the return address into it, and the registers it
 * left (sp just above the return address; rbp as it was). */
struct mf_frame {
	uintptr_t pc, sp, bp;
	uintptr_t caller; /* the entry point's own return address: where the program called */
};

/* (MF_FRAME_HERE(f) sets f's pc, sp and bp to the frame it expands in: lib/arch/) */

/* A thread's last stack as the walk saw it, outermost frame first: frame i entered with pc[i],
 * f[i].sp and f[i].bp and left by f[i].rule; f[i].hash folds pc[0] to pc[i] in turn. The
 * fresh arrays take a walk's new frames, innermost first, until it knows where they go. */
struct mf_walk_frame {
	uintptr_t sp, bp;
	uint64_t rule, hash;
};
struct mf_walk_stacks {
	uintptr_t pc[MF_DEPTH_MAX + 16]; /* (apart from f: the trie reads them as an array) */
	struct mf_walk_frame f[MF_DEPTH_MAX + 16];
	uintptr_t fresh_pc[MF_DEPTH_MAX + 16];
	struct mf_walk_frame fresh[MF_DEPTH_MAX + 16];
	uint64_t epoch;
	int count;    /* frames in pc and f */
	int kept;     /* of them, the outermost ones kept from the stack before */
	int reusable; /* the stack ended at its outermost frame, under epoch */
	int cut;      /* MF_WALK_SLOW: frames walked (in fresh_pc) before one no rule covers */
	/* The mapping a guessed frame may be read in (the stack's), as far as known; and the
	 * sp of the frame a walk needed it for (MF_WALK_BOUNDS). */
	uintptr_t stack_lo, stack_hi, bounds_sp;
};

/* One word of a walked stack, and what it held then. */
struct mf_walk_check {
	const uintptr_t *at;
	uintptr_t was;
};

/* A thread's hot stacks, each with the trie leaf it was counted at (hot.c): a tree of the
 * words that decide their walks, in an arena that grows while its stacks pay (from
 * MF_HOT_ARENA_FIRST bytes to MF_HOT_ARENA in the thread's state, then to MF_HOT_ARENA_MAX
 * in a mapping of its own) and starts over when full. */
enum {
	MF_HOT_BUCKETS = 256,
	MF_HOT_ARENA_FIRST = 32 << 10,
	MF_HOT_ARENA = 512 << 10,
	MF_HOT_ARENA_MAX = 8 << 20,
	MF_HOT_CHECKS = 512, /* a stack that needs more words is not kept */
	MF_HOT_SHIFT_MAX = 8,
	MF_HOT_FANS = 256,
};
/* A branch's child, found again without going through its siblings: the node at offset
 * `child` is the child of the node at offset 16 * (`key` & 0xfffff) whose `was` is `was`, in
 * the arena's round `key` >> 20. */
struct mf_hot_fan {
	uintptr_t was;
	uint32_t key, child;
};
struct mf_hot {
	unsigned epoch;			 /* of the rules its stacks were walked by */
	uint32_t used;			 /* bytes of arena; 0: not started */
	uint32_t limit;			 /* the bytes it may use now (0: the first size) */
	uint32_t hits, puts;		 /* stacks found and kept since the arena was last full */
	uint32_t shift, skipped;	 /* keep one in 1 << shift of the stacks offered */
	uint32_t bucket[MF_HOT_BUCKETS]; /* the roots, by caller and sp */
	unsigned char *arena;		 /* 16-aligned, touched as used: the thread state's
					    MF_HOT_ARENA bytes, or MF_HOT_ARENA_MAX mapped */
	struct mf_walk_check *scratch;	 /* MF_HOT_CHECKS of them */
	uint32_t round;			 /* the arena's, as the fans' keys hold it (<< 20) */
	uint32_t missed; /* mf_hot_find looked and found none, since mf_unwind_leaf last looked */
	struct mf_hot_fan fan[MF_HOT_FANS]; /* by the branch and its word's value */
};

/* A thread's capture state, kept in its thread state (the large parts last: their pages are
 * touched only as they are used). */
struct mf_unwind_thread {
	struct mf_hot hot;	  /* all that the hot path reads before it counts a call */
	unsigned generation;	  /* mf_modules_generation of its trie index */
	int nodes_known;	  /* nodes[0..nodes_known) are the trie nodes of ws.pc[0..) */
	struct mf_walk_stacks ws; /* the capture buffers: here, not on the program's stack */
	uint32_t nodes[MF_DEPTH_MAX + 16];
	_Alignas(16) unsigned char hot_arena[MF_HOT_ARENA];
	struct mf_walk_check hot_scratch[MF_HOT_CHECKS];
	void *check[MF_DEPTH_MAX + 16]; /* MALLOC_FREQ_UNWIND=check's (untouched otherwise) */
};

/* At start, after the module map: the rule table, the rule cache, libunwind (loaded unless the
 * rule cache says this run will not need it). */
void mf_unwind_init(void);
/* A new thread's state (in zeroed memory). */
void mf_unwind_thread_init(struct mf_unwind_thread *u);
void mf_unwind_thread_end(struct mf_unwind_thread *u); /* (its state is given back) */
/* hot.c: the trie leaf of the stack of a call made now from frame `from`, if it is one of
 * the thread's hot stacks (h: its hot stacks, u->hot), else 0: the hot path, no system call,
 * errno untouched. When it looked (now is the stacks' epoch) and found none, it sets
 * h->missed: the slow path's mf_unwind_leaf then walks at once. Also 0 if `now` is not the epoch
 * the stacks were kept in: now is mf_walk_epoch_now() (unwind/internal.h), or on the hot path
 * mf_wiped.hot, which holds the gate above the epoch: none is found while a gate is set
 * (mf_config.hot is 0, recording is off, or a snapshot holds). */
uint32_t mf_hot_find(struct mf_hot *h, const struct mf_frame *from, uint64_t now);
/* The thread's hot stacks forgotten, and the trie nodes its last walk found: mf_hot_find
 * finds none until mf_unwind_leaf keeps new ones (the thread itself, or a signal handler in
 * it). After the trie's root changed, or to make every call take the slow path. */
void mf_unwind_hot_drop(struct mf_unwind_thread *u);
/* The trie leaf of this call's stack (entry point e, called from frame `from`), created if new;
 * 0 when the trie is out of room. */
uint32_t mf_unwind_leaf(struct mf_unwind_thread *u, struct mf_trie *t, enum mf_entry e,
			const struct mf_frame *from);
/* Everything cached may be wrong from now on (code may be unloaded and other code mapped). */
void mf_unwind_forget(void);
void mf_unwind_postfork_child(void);
/* At exit: check mode's figures on stderr; this run's confirmations into the rule cache. */
void mf_unwind_exit(void);

#endif
