/* trie.c's layout and interface: the stack trie over a node array its owner may grow, the
 * index and memo that find a stack's nodes, and the keys below any pc. For the trie itself,
 * the thread that owns one (thread.c) and the walk that finds a stack's nodes (lib/unwind/).
 * Pure data structure: no I/O, no malloc. */
#ifndef MF_TRIE_H
#define MF_TRIE_H

#include <stdint.h>

#include "malloc_freq_format.h"

/* The hash of a stack, folded from its outermost frame in: the trie's memo key. */
#define MF_STACK_HASH_SEED 0x2545f4914f6cdd1dull
static inline uint64_t mf_stack_hash_step(uint64_t h, uintptr_t pc)
{
	h = (h ^ pc) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* The hash of a node's path from the root: its parent's, and its own key. Its low bits are
 * the node's home in the index (trie.c), so that the places of a stack's lookups are known
 * from its pcs alone, before the first one. */
static inline uint32_t mf_trie_hash(uint32_t parent_hash, uintptr_t pc)
{
	uint64_t h =
	    (uint64_t)pc * 0x9e3779b97f4a7c15ull ^ (uint64_t)parent_hash * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(h ^ (h >> 29));
}

/* trie.c: the stack trie over a node array that the owner may grow. */
struct mf_trie;
typedef struct mf_node *(*mf_trie_grow_fn)(void *arg, uint64_t *capacity);
typedef void (*mf_trie_resolve_fn)(uintptr_t pc, struct mf_node *node);
struct mf_trie_slot {
	uintptr_t pc;
	uint32_t parent;
	uint32_t node; /* 0: empty (the root is nobody's child) */
};
/* A stack's leaf, by a 64-bit hash of its keys; the frame count and both ends are checked
 * too, so a wrong leaf would need all of them to agree. */
struct mf_trie_memo {
	uint64_t hash;
	uintptr_t inner, outer;
	uint32_t node;	/* 0: empty */
	uint32_t shape; /* frames, and 1 << 31 if truncated */
};
#define MF_TRIE_INDEX_MIN      128 /* homes; with the tail, 3 KiB: one page at first */
#define MF_TRIE_INDEX_ROOM     8192
#define MF_TRIE_INDEX_TAIL     64 /* slots after the last home: probes run on, never wrap */
#define MF_TRIE_MEMO_FIRST     128
#define MF_TRIE_MEMO_SLOTS     1024
#define MF_TRIE_PATH_HASH_ROOM 8192
#define MF_TRIE_AHEAD	       7 /* index lines asked for ahead of a stack's lookups */
/* Where a trie's index, memo and path hashes grow before they need mappings of their own (in
 * the owner's memory, touched as used): the memo's full size, the index up to
 * MF_TRIE_INDEX_ROOM homes (it doubles where it lies), and the path hashes of the first
 * MF_TRIE_PATH_HASH_ROOM node slots. */
struct mf_trie_room {
	_Alignas(MF_PAGE_SIZE) struct mf_trie_slot index[MF_TRIE_INDEX_ROOM + MF_TRIE_INDEX_TAIL];
	struct mf_trie_memo memo[MF_TRIE_MEMO_SLOTS];
	/* (page-aligned as the index is: each is given back by whole pages when it leaves) */
	_Alignas(MF_PAGE_SIZE) uint32_t path_hash[MF_TRIE_PATH_HASH_ROOM];
};
_Static_assert(MF_TRIE_PATH_HASH_ROOM * sizeof(uint32_t) % MF_PAGE_SIZE == 0,
	       "the room's path hashes are given back by whole pages (trie.c)");

struct mf_trie {
	struct mf_node *nodes;
	uint64_t capacity;
	uint64_t *count;	   /* where node_count is published (the file header) */
	struct mf_trie_room *room; /* NULL: index and memo in mappings of their own */
	struct mf_trie_slot *index;
	struct mf_trie_memo *memo;
	uint64_t memo_mask;
	uint64_t memo_added; /* stacks put in the memo since it was made */
	uint64_t index_mask; /* homes - 1; the tail's MF_TRIE_INDEX_TAIL slots follow them */
	uint64_t index_used;
	uint32_t *path_hash; /* per node slot: the hash of its path, its place in the index */
	uint64_t path_hash_cap;
	mf_trie_grow_fn grow;
	mf_trie_resolve_fn resolve;
	void *grow_arg;
	uint32_t leaf_slots; /* slots after a leaf: its records (MF_LEAF_SLOTS by default) */
	uint32_t root;	     /* where stacks start: 0, or the node of the owner's tag path */
};
/* Key values below any real pc: the leaf of an entry point and the truncation marker. */
#define MF_TRIE_KEY_ENTRY(e)	((uintptr_t)(e) + 1)
#define MF_TRIE_KEY_TRUNCATED	((uintptr_t)64)
#define MF_TRIE_KEY_WEIGHT	((uintptr_t)100)	/* a leaf's time (MF_MODULE_WEIGHT) */
#define MF_TRIE_KEY_SIZES	((uintptr_t)101)	/* under a leaf: its dense size histogram */
#define MF_TRIE_KEY_TAG(id)	((uintptr_t)128 + (id)) /* a tag scope, id < MF_TAGS_MAX */
#define MF_TRIE_KEY_SPECIAL_MAX ((uintptr_t)4096)
_Static_assert(128 + MF_TAGS_MAX <= 4096, "tag keys lie below any pc");
/* Sets up the trie over nodes[0..capacity) with *count == 0; writes the root. 0 or -1.
 * room: where its index and memo grow first, or NULL. */
int mf_trie_init(struct mf_trie *t, struct mf_trie_room *room, struct mf_node *nodes,
		 uint64_t capacity, uint64_t *count, mf_trie_grow_fn grow,
		 mf_trie_resolve_fn resolve, void *grow_arg);
void mf_trie_destroy(struct mf_trie *t);
/* The child of parent for pc, created if absent. Returns its index, or 0 when the node array
 * could not grow (the call then goes uncounted in the trie). */
uint32_t mf_trie_child(struct mf_trie *t, uint32_t parent, uintptr_t pc);
/* The leaf for a whole stack: the truncation marker if truncated, then pcs[0] (outermost) to
 * pcs[n-1], then leaf (an entry key); created if absent. 0 when the array could not grow.
 * hash: the pcs' mf_stack_hash_step fold from pcs[0] if the caller has it, else 0.
 * path (n entries, or NULL): path[0..*known) are the nodes of pcs[0..*known), as the caller
 * found them before (*known 0: none); the search starts below them, and *known is set to the
 * number of path entries that hold the nodes of pcs[0..) afterwards (0 if it used its memo). */
uint32_t mf_trie_stack(struct mf_trie *t, void *const *pcs, int n, int truncated, uintptr_t leaf,
		       uint64_t hash, uint32_t *path, int *known);
/* Forgets the pc index (not the nodes): after an unload, pcs may name other code. */
void mf_trie_forget_index(struct mf_trie *t);

#endif
