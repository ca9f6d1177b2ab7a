/* A thread's hot stacks: each stack it counted again, kept with its trie leaf and the words of
 * the stack that decide where a walk from its first frame goes (mf_walk_checks), innermost
 * first. A call whose words all hold what they held is a call from that stack: counted at its
 * leaf, without a walk, a hash or the trie. The words are read innermost first, as a walk
 * would: each lies in a frame the ones before it showed to be the same.
 *
 * Stacks are kept as a tree, so that stacks sharing their inner frames (an allocation wrapper
 * reached from many paths, a loop unrolled into several call sites) share those words and
 * part where they differ: which word is read next depends only on the words read before it
 * (they decided the rules that place it), so the stacks that agree so far all read the same
 * word next, and a node keeps its words in one run and branches on the value of the next.
 * Where the first child does not hold that value, the child found for it last is noted (a
 * fan), so that a branch of many children costs about what one of two does.
 * A root is where the program called the entry point (the entry point's frame, the caller's
 * return address). Everything lies in one arena per thread, touched as it fills, which grows
 * while its stacks pay (mf_hot_full; past the thread state's part, in a mapping of its own)
 * and starts over when full at its largest, when they do not, or when the rules change (an
 * unload). Runs inside malloc. */
#include "config.h"

#include <string.h>
#include <sys/mman.h>

#include "unwind/internal.h"

/* n words to check, at offset `words` in the arena, and after them a stop (MF_HOT_STOP), then
 * either a leaf, or a branch: the word whose address the stop holds picks the child whose `was`
 * it holds. A node split in two keeps its words where they lie: the first part's stop is
 * written over the word they part at, the second part's words are the rest of the run. */
struct mf_hot_node {
	uintptr_t was;	  /* the parent's branch word, for this node */
	uint32_t words;	  /* where its words lie */
	uint32_t leaf;	  /* the trie leaf; 0 for a branch */
	uint32_t child;	  /* first child */
	uint32_t sibling; /* next child of the same parent */
	uint16_t n;
};

/* A root and its first node. (The entry point is known by pc: each has its own call.) */
struct mf_hot_root {
	uintptr_t pc, sp, caller; /* the entry point's frame and its return address */
	uint32_t next;		  /* the next root in its bucket */
	uint32_t pad;
	struct mf_hot_node node; /* (its words follow at first) */
};

_Static_assert(MF_HOT_BUCKETS == 1 << 8, "mf_hot_bucket gives 8 bits");
_Static_assert(MF_HOT_CHECKS + 1 <= UINT16_MAX, "a node's words fit its 16-bit count");
_Static_assert(sizeof(struct mf_hot_node) == 32 && sizeof(struct mf_hot_root) == 64,
	       "a node's words start 16-aligned after it");
#define MF_HOT_AT(h, off) ((void *)((h)->arena + (off)))

static struct mf_hot_node *mf_hot_node(const struct mf_hot *h, uint32_t off)
{
	return MF_HOT_AT(h, off);
}

static inline struct mf_walk_check *mf_hot_words(const struct mf_hot *h,
						 const struct mf_hot_node *x)
{
	return MF_HOT_AT(h, x->words);
}

static inline unsigned mf_hot_bucket(uintptr_t caller, uintptr_t sp)
{
	return ((uint32_t)(sp >> 4 ^ caller) * 0x9e3779b9u) >> (32 - 8); /* (a 32-bit product) */
}

/* The check after a node's last: it never holds, and so ends the words' loop without a count
 * of its own to keep; the loop then knows it by where it reads (no word of a stack lies
 * there). It reads mf_hot_stop, which stays 0 (not a word of the arena, which may move),
 * against what is never 0: 1 after a leaf's words, the address of the word a branch's child is
 * picked by after a branch's. */
static const uintptr_t mf_hot_stop;
#define MF_HOT_STOP(what) ((struct mf_walk_check){&mf_hot_stop, (what)})
#define MF_HOT_LEAF	  1

_Static_assert(MF_HOT_ARENA_MAX >> 4 <= 1 << 20, "a node's offset / 16 fits a fan key's low bits");
/* The fans' key of the node at off (16-aligned) in this round of the arena. */
static inline uint32_t mf_hot_fan_key(const struct mf_hot *h, uint32_t off)
{
	return off >> 4 | h->round;
}

static inline struct mf_hot_fan *mf_hot_fan(struct mf_hot *h, uint32_t key, uintptr_t was)
{
	return &h->fan[(was ^ was >> 8 ^ key) & (MF_HOT_FANS - 1)];
}

/* The node's words end after n of them: the stop there (what: MF_HOT_LEAF, or the address of
 * the word it branches on). */
static void mf_hot_end(const struct mf_hot *h, struct mf_hot_node *x, uint32_t n, uintptr_t what)
{
	x->n = (uint16_t)n;
	mf_hot_words(h, x)[n] = MF_HOT_STOP(what);
}

/* The first of x's words that is not what it was, in order, four to a round: the stop after
 * them (they all are), or one before it. */
static inline const struct mf_walk_check *mf_hot_same(const struct mf_hot *h,
						      const struct mf_hot_node *x)
{
	const struct mf_walk_check *c = mf_hot_words(h, x);
	for (;; c += 4) {
		if (*c[0].at != c[0].was)
			break;
		if (*c[1].at != c[1].was) {
			c += 1;
			break;
		}
		if (*c[2].at != c[2].was) {
			c += 2;
			break;
		}
		if (*c[3].at != c[3].was) {
			c += 3;
			break;
		}
	}
	return c;
}

MF_INLINE uint32_t mf_hot_find(struct mf_hot *h, const struct mf_frame *from, uint64_t now)
{
	if (mf_unlikely(h->epoch != now))
		return 0;
	/* (an empty bucket leads to the root at 0, which no call is from) */
	const struct mf_hot_root *root =
	    MF_HOT_AT(h, h->bucket[mf_hot_bucket(from->caller, from->sp)]);
	while (mf_unlikely(root->caller != from->caller || root->sp != from->sp ||
			   root->pc != from->pc)) {
		if (!root->next)
			goto missed;
		root = MF_HOT_AT(h, root->next);
	}
	const struct mf_hot_node *x = &root->node;
	for (;;) {
		const struct mf_walk_check *c = mf_hot_same(h, x);
		if (c->at != &mf_hot_stop)
			break; /* (a word before the stop changed) */
		if (x->leaf) {
			h->hits++;
#ifdef MF_FAULT_HOT
			if (h->hits % 64 == 0) /* a test build's fault, for check mode to catch */
				return x->leaf + 1;
#endif
			return x->leaf;
		}
		uintptr_t v = *(const uintptr_t *)c->was;
		const struct mf_hot_node *first = mf_hot_node(h, x->child);
		if (first->was == v) {
			x = first;
			continue;
		}
		uint32_t key = mf_hot_fan_key(h, (uint32_t)((const unsigned char *)x - h->arena));
		struct mf_hot_fan *f = mf_hot_fan(h, key, v);
		if (f->key == key && f->was == v) {
			x = mf_hot_node(h, f->child);
			continue;
		}
		uint32_t k = first->sibling;
		for (; k && (x = mf_hot_node(h, k))->was != v; k = x->sibling)
			;
		if (!k)
			goto missed;
		/* The next call from it goes there directly. Its key last: a handler that leaves
		 * this call for good (siglongjmp) leaves no fan that leads elsewhere. */
		volatile struct mf_hot_fan *w = f; /* (the stores in this order) */
		w->key = 0;
		w->was = v;
		w->child = k;
		w->key = key;
	}
missed: /* (the slow path need not look again: mf_unwind_leaf) */
	h->missed = 1;
	return 0;
}

/* size bytes at the end of the arena (16-aligned), or 0 when it is full. */
static uint32_t mf_hot_alloc(struct mf_hot *h, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (h->used + size > h->limit)
		return 0;
	uint32_t off = h->used;
	h->used += (uint32_t)size;
	return off;
}

static void mf_hot_clear(struct mf_hot *h, unsigned epoch)
{
	memset(h->bucket, 0, sizeof(h->bucket));
	h->round += 1u << 20; /* (the fans of the rounds before no longer match) */
	if (!h->round) {
		memset(h->fan, 0, sizeof(h->fan));
		h->round = 1u << 20;
	}
	/* Offset 0 stands for none; what lies there, a root of caller 0 and no next, is never
	 * written. */
	_Static_assert(offsetof(struct mf_hot_root, node) == 32, "the root at 0 takes 32 bytes");
	h->used = 32;
	h->epoch = epoch;
	if (!h->limit)
		h->limit = MF_HOT_ARENA_FIRST;
}

/* (epoch 0 matches the wiped epoch of a raw fork's child, but then no bucket holds a stack) */
void mf_hot_drop(struct mf_hot *h)
{
	mf_hot_clear(h, 0);
}

void mf_hot_free(struct mf_hot *h)
{
	if (h->limit > MF_HOT_ARENA) /* (moved: mf_hot_room) */
		munmap(h->arena, MF_HOT_ARENA_MAX);
	h->arena = NULL;
}

/* Room for the arena at twice its limit: 0, or -1. Up to MF_HOT_ARENA bytes it lies in the
 * thread's state; there, full, it moves with its stacks (their offsets hold) to a mapping of
 * MF_HOT_ARENA_MAX bytes of address space, reserved (mf_pages_reserve) where it is within a
 * 256th of RLIMIT_AS, and made accessible a doubling at a time. The slow path's: a signal
 * handler's call meanwhile is counted apart (nested), and never looks at the arena. */
static int mf_hot_room(struct mf_hot *h)
{
	if (h->limit < MF_HOT_ARENA)
		return 0;
	if (h->limit > MF_HOT_ARENA) /* (moved) */
		return mprotect(h->arena + h->limit, h->limit, PROT_READ | PROT_WRITE);
	if (mf_prof_as_share() < MF_HOT_ARENA_MAX)
		return -1;
	unsigned char *m = mf_pages_reserve(MF_HOT_ARENA_MAX);
	if (!m)
		return -1;
	if (mprotect(m, 2 * MF_HOT_ARENA, PROT_READ | PROT_WRITE)) {
		munmap(m, MF_HOT_ARENA_MAX);
		return -1;
	}
	memcpy(m, h->arena, h->used);
	h->arena = m;
	return 0;
}

/* The arena is full. If its stacks were not found at least twice as often as they were
 * kept, more stacks come and go than it holds: keep only one in two more of them from now on
 * (a stack kept costs about as much as a walk saves); if they paid, as many again, and it
 * grows, keeping them, up to its largest: a thread whose hot stacks are many then walks
 * seldom (node's workers keep about 500 at a time; gcc's cc1 on a long file about 8,000, in
 * 2.5 MiB: at 512 KiB it walked 55% of its calls, at 8 MiB 0.5%), and one whose stacks do
 * not pay, or that has few, stays small. Otherwise it starts over. */
static void mf_hot_full(struct mf_hot *h, unsigned epoch)
{
	int paid = h->hits >= 2 * h->puts;
	h->hits = h->puts = 0;
	if (!paid)
		h->shift += h->shift < MF_HOT_SHIFT_MAX;
	else if (h->shift)
		h->shift--;
	if (paid && h->limit < MF_HOT_ARENA_MAX && mf_hot_room(h) == 0)
		h->limit *= 2;
	else
		mf_hot_clear(h, epoch);
}

/* A node holding the words c[0..n) and then the leaf; 0 when the arena is full. */
static uint32_t mf_hot_node_new(struct mf_hot *h, uintptr_t was, const struct mf_walk_check *c,
				uint32_t n, uint32_t leaf)
{
	uint32_t off = mf_hot_alloc(h, sizeof(struct mf_hot_node) + (n + 1) * sizeof(*c));
	if (!off)
		return 0;
	struct mf_hot_node *x = MF_HOT_AT(h, off);
	*x = (struct mf_hot_node){.was = was, .words = off + sizeof(*x), .leaf = leaf};
	memcpy(mf_hot_words(h, x), c, n * sizeof(*c));
	mf_hot_end(h, x, n, MF_HOT_LEAF);
	return off;
}

/* The node at off gives its children away (to a node split from it): the fans that lead from
 * it to them go. A fan is only ever made for a value one of its children holds, so those are
 * the ones to look at (where all 256 were before, at each split). */
static void mf_hot_fans_forget(struct mf_hot *h, uint32_t off)
{
	uint32_t key = mf_hot_fan_key(h, off);
	for (uint32_t k = mf_hot_node(h, off)->child; k; k = mf_hot_node(h, k)->sibling) {
		struct mf_hot_fan *f = mf_hot_fan(h, key, mf_hot_node(h, k)->was);
		if (f->key == key)
			f->key = 0;
	}
}

/* Adds the words c[0..n) leading to leaf under the node at off. 0, or -1 when the arena is
 * full or the words do not fit the tree (they always do while the epoch holds). */
static int mf_hot_insert(struct mf_hot *h, uint32_t off, const struct mf_walk_check *c, uint32_t n,
			 uint32_t leaf)
{
	for (;;) {
		struct mf_hot_node *x = mf_hot_node(h, off);
		struct mf_walk_check *w = mf_hot_words(h, x);
		uint32_t i = 0;
		while (i < x->n && i < n && w[i].at == c[i].at && w[i].was == c[i].was)
			i++;
		if (i < x->n) {
			/* They part at word i (at the same place, or they are not of this tree):
			 * the node keeps words 0..i-1 and branches on word i, whose place takes
			 * its stop; its rest (where it lies, with its stop) goes to a new child,
			 * the new words to another. */
			if (i == n || w[i].at != c[i].at)
				return -1;
			uint32_t rest = mf_hot_alloc(h, sizeof(struct mf_hot_node));
			uint32_t fresh =
			    rest ? mf_hot_node_new(h, c[i].was, c + i + 1, n - i - 1, leaf) : 0;
			if (!fresh)
				return -1;
			mf_hot_fans_forget(h, off);
			x = mf_hot_node(h, off); /* (the arena does not move here; for clarity) */
			*mf_hot_node(h, rest) = (struct mf_hot_node){
			    .was = w[i].was,
			    .words = x->words + (i + 1) * (uint32_t)sizeof(*w),
			    .leaf = x->leaf,
			    .child = x->child,
			    .sibling = fresh,
			    .n = (uint16_t)(x->n - i - 1),
			};
			mf_hot_end(h, x, i, (uintptr_t)w[i].at);
			x->leaf = 0;
			x->child = rest;
			return 0;
		}
		if (x->leaf) /* the node's words are all the stack's: it is there already */
			return i == n && x->leaf == leaf ? 0 : -1;
		/* All its words agree and it branches, on word i of the new ones. */
		if (i == n || c[i].at != (const uintptr_t *)w[x->n].was)
			return -1;
		uint32_t k = x->child;
		while (k && mf_hot_node(h, k)->was != c[i].was)
			k = mf_hot_node(h, k)->sibling;
		if (!k) {
			uint32_t fresh = mf_hot_node_new(h, c[i].was, c + i + 1, n - i - 1, leaf);
			if (!fresh)
				return -1;
			mf_hot_node(h, fresh)->sibling = x->child;
			x->child = fresh;
			return 0;
		}
		off = k;
		c += i + 1;
		n -= i + 1;
	}
}

/* The root of (pc, sp, caller), or NULL. */
static struct mf_hot_root *mf_hot_root(const struct mf_hot *h, uintptr_t pc, uintptr_t sp,
				       uintptr_t caller)
{
	for (uint32_t r = h->bucket[mf_hot_bucket(caller, sp)]; r;) {
		struct mf_hot_root *root = MF_HOT_AT(h, r);
		if (root->caller == caller && root->sp == sp && root->pc == pc)
			return root;
		r = root->next;
	}
	return NULL;
}

/* A new root holding the words c[0..n) and then the leaf; 0 when the arena is full. */
static int mf_hot_root_new(struct mf_hot *h, uintptr_t pc, uintptr_t sp, uintptr_t caller,
			   const struct mf_walk_check *c, uint32_t n, uint32_t leaf)
{
	uint32_t off = mf_hot_alloc(h, sizeof(struct mf_hot_root) + (n + 1) * sizeof(*c));
	if (!off)
		return -1;
	struct mf_hot_root *root = MF_HOT_AT(h, off);
	unsigned b = mf_hot_bucket(caller, sp);
	*root = (struct mf_hot_root){
	    pc, sp, caller, h->bucket[b], 0, {.words = off + sizeof(*root), .leaf = leaf}};
	memcpy(mf_hot_words(h, &root->node), c, n * sizeof(*c));
	mf_hot_end(h, &root->node, n, MF_HOT_LEAF);
	h->bucket[b] = off;
	return 0;
}

void mf_hot_put(struct mf_hot *h, const struct mf_walk_stacks *ws, uint32_t leaf,
		const struct mf_frame *from)
{
	struct mf_walk_check *c = h->scratch;
	int n = ws->count;
	unsigned epoch = mf_walk_epoch_now();
	if (h->epoch != epoch || !h->used)
		mf_hot_clear(h, epoch);
	if (n < 2 || (unsigned)ws->epoch != epoch)
		return;
	if (h->shift && (++h->skipped & ((1u << h->shift) - 1)))
		return; /* (stacks come and go faster than the arena holds them) */
	h->puts++;
	int k = mf_walk_checks(ws, c, MF_HOT_CHECKS, &from->bp);
	/* The first word is the caller's return address, which the root holds. */
	uintptr_t caller = ws->pc[n - 2];
	if (k < 1 ||
	    c[0].at != (const uintptr_t *)(ws->f[n - 2].sp + mf_rule_ra_off(ws->f[n - 1].rule)) ||
	    mf_ra_strip(c[0].was) != caller)
		return;
	uintptr_t pc = ws->pc[n - 1], sp = ws->f[n - 1].sp;
	for (int attempt = 0; attempt < 2; attempt++) {
		struct mf_hot_root *root = mf_hot_root(h, pc, sp, caller);
		uint32_t off = root ? (uint32_t)((unsigned char *)&root->node - h->arena) : 0;
		if (root ? mf_hot_insert(h, off, c + 1, (uint32_t)k - 1, leaf) == 0
			 : mf_hot_root_new(h, pc, sp, caller, c + 1, (uint32_t)k - 1, leaf) == 0)
			return;
		if (h->used + sizeof(struct mf_hot_root) + (size_t)(k + 1) * sizeof(*c) <= h->limit)
			return;	       /* it did not fit the tree: leave it */
		mf_hot_full(h, epoch); /* full: grow or start over, once */
	}
}
