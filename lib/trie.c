/* The stack trie: nodes in an array the owner provides (the thread's file mapping), found
 * through an open-addressing index keyed by (parent, pc) in anonymous memory, and a memo of
 * whole stacks' leaves (most calls come from a stack seen before: one lookup then replaces
 * one index probe per frame). A node's place in the index is a hash of its path, so a new
 * stack's probes can all be fetched from memory at once. Pure data structure: no I/O but the
 * owner's grow callback; no malloc; one thread at a time. */
#include "config.h"

#include <string.h>
#include <sys/mman.h>

#include "mf_internal.h"
#include "trie.h"

/* The memo starts at one page and grows to its full size as stacks keep coming that it has
 * not seen (it is a cache: a new one starts empty; in the room, the old entries stay where
 * they are, where a lookup checks them as any other). Four times the memo (at most
 * MF_TRIE_MEMO_SLOTS), once it has taken in twice as many stacks as it holds. */
static void mf_trie_memo_grow(struct mf_trie *t)
{
	uint64_t slots = (t->memo_mask + 1) * 4;
	if (slots > MF_TRIE_MEMO_SLOTS)
		slots = MF_TRIE_MEMO_SLOTS;
	t->memo_added = 0;
	if (t->room) {
		memset(t->memo + t->memo_mask + 1, 0,
		       (slots - t->memo_mask - 1) * sizeof(struct mf_trie_memo));
	} else {
		struct mf_trie_memo *memo = mf_pages_new(slots * sizeof(struct mf_trie_memo));
		if (!memo)
			return; /* try again after as many more */
		munmap(t->memo, (t->memo_mask + 1) * sizeof(struct mf_trie_memo));
		t->memo = memo;
	}
	t->memo_mask = slots - 1;
}

/* The hash of a node's path from the root: its parent's, and its own key. Its low bits are
 * the node's place in the index, so that the places of a stack's lookups are known from its
 * pcs alone, before the first one. */
static uint32_t mf_trie_hash(uint32_t parent_hash, uintptr_t pc)
{
	uint64_t h =
	    (uint64_t)pc * 0x9e3779b97f4a7c15ull ^ (uint64_t)parent_hash * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(h ^ (h >> 29));
}

/* An index of that many slots: in the room after the one before, or mapped. */
static struct mf_trie_slot *mf_trie_index_alloc(struct mf_trie *t, uint64_t slots)
{
	if (t->room && slots <= MF_TRIE_INDEX_ROOM) {
		struct mf_trie_slot *index = t->room->index + slots - MF_TRIE_INDEX_MIN;
		memset(index, 0, slots * sizeof(struct mf_trie_slot));
		return index;
	}
	return mf_pages_new(slots * sizeof(struct mf_trie_slot));
}

/* Gives back the memory of the index before the one now in use. */
static void mf_trie_index_free(struct mf_trie *t, struct mf_trie_slot *index, uint64_t slots)
{
	size_t len = slots * sizeof(struct mf_trie_slot);
	if (!t->room || slots > MF_TRIE_INDEX_ROOM)
		munmap(index, len);
	else /* (memory for other uses again, as zero pages) */
		madvise(index, len, MADV_DONTNEED);
}

static void mf_trie_index_put(struct mf_trie_slot *index, uint64_t mask, uint32_t hash,
			      uint32_t parent, uintptr_t pc, uint32_t node)
{
	uint64_t i = hash & mask;
	while (index[i].node)
		i = (i + 1) & mask;
	index[i] = (struct mf_trie_slot){.pc = pc, .parent = parent, .node = node};
}

/* Doubles the index; on failure the old one stays (just fuller). */
static void mf_trie_index_grow(struct mf_trie *t)
{
	uint64_t slots = (t->index_mask + 1) * 2;
	struct mf_trie_slot *index = mf_trie_index_alloc(t, slots);
	if (!index)
		return;
	for (uint64_t i = 0; i <= t->index_mask; i++)
		if (t->index[i].node)
			mf_trie_index_put(index, slots - 1, t->path_hash[t->index[i].node],
					  t->index[i].parent, t->index[i].pc, t->index[i].node);
	mf_trie_index_free(t, t->index, t->index_mask + 1);
	t->index = index;
	t->index_mask = slots - 1;
}

/* Room in path_hash for node slots [0, need): twice as many as before, or need. 0 or -1. */
static int mf_trie_path_hash_grow(struct mf_trie *t, uint64_t need)
{
	uint64_t had = t->path_hash_cap, cap = had * 2 > need ? had * 2 : need;
	uint32_t *hash = mf_pages_new(cap * sizeof(*hash));
	if (!hash)
		return -1;
	memcpy(hash, t->path_hash, had * sizeof(*hash));
	if (t->room && had <= MF_TRIE_PATH_HASH_ROOM) /* (zero pages again) */
		madvise(t->path_hash, had * sizeof(*hash), MADV_DONTNEED);
	else
		munmap(t->path_hash, had * sizeof(*hash));
	t->path_hash = hash;
	t->path_hash_cap = cap;
	return 0;
}

int mf_trie_init(struct mf_trie *t, struct mf_trie_room *room, struct mf_node *nodes,
		 uint64_t capacity, uint64_t *count, mf_trie_grow_fn grow,
		 mf_trie_resolve_fn resolve, void *grow_arg)
{
	memset(t, 0, sizeof(*t));
	t->room = room;
	t->index = mf_trie_index_alloc(t, MF_TRIE_INDEX_MIN);
	if (!t->index || capacity < 1)
		return -1;
	t->index_mask = MF_TRIE_INDEX_MIN - 1;
	if (room)
		memset(t->memo = room->memo, 0, MF_TRIE_MEMO_FIRST * sizeof(struct mf_trie_memo));
	else if (!(t->memo = mf_pages_new(MF_TRIE_MEMO_FIRST * sizeof(struct mf_trie_memo))))
		return -1;
	t->memo_mask = MF_TRIE_MEMO_FIRST - 1;
	t->path_hash_cap = MF_TRIE_PATH_HASH_ROOM;
	if (room)
		t->path_hash = room->path_hash;
	else if (!(t->path_hash = mf_pages_new(t->path_hash_cap * sizeof(uint32_t))))
		return -1;
	t->path_hash[0] = 0;
	t->nodes = nodes;
	t->capacity = capacity;
	t->count = count;
	t->grow = grow;
	t->resolve = resolve;
	t->grow_arg = grow_arg;
	t->leaf_slots = MF_LEAF_SLOTS;
	memset(&nodes[0], 0, sizeof(nodes[0]));
	__atomic_store_n(count, 1, __ATOMIC_RELEASE);
	return 0;
}

void mf_trie_destroy(struct mf_trie *t)
{
	if (t->index && (!t->room || t->index_mask + 1 > MF_TRIE_INDEX_ROOM))
		munmap(t->index, (t->index_mask + 1) * sizeof(struct mf_trie_slot));
	if (t->memo && !t->room)
		munmap(t->memo, (t->memo_mask + 1) * sizeof(struct mf_trie_memo));
	if (t->path_hash && (!t->room || t->path_hash_cap > MF_TRIE_PATH_HASH_ROOM))
		munmap(t->path_hash, t->path_hash_cap * sizeof(uint32_t));
	t->index = NULL;
	t->memo = NULL;
	t->path_hash = NULL;
}

void mf_trie_forget_index(struct mf_trie *t)
{
	memset(t->index, 0, (t->index_mask + 1) * sizeof(struct mf_trie_slot));
	memset(t->memo, 0, (t->memo_mask + 1) * sizeof(struct mf_trie_memo));
	t->index_used = 0;
}

/* Node slots that follow a node of key pc: a leaf's record, a dense size histogram's counts
 * (see malloc_freq_format.h); none after frames, tags, the truncation mark or a leaf's time. */
static uint64_t mf_trie_slots_after(const struct mf_trie *t, uintptr_t pc)
{
	if (pc == MF_TRIE_KEY_SIZES)
		return MF_SIZES_SLOTS;
	return pc < MF_TRIE_KEY_TRUNCATED ? t->leaf_slots : 0;
}

static MF_NOINLINE uint32_t mf_trie_add(struct mf_trie *t, uint32_t parent, uintptr_t pc,
					uint32_t hash)
{
	uint64_t n = *t->count, after = mf_trie_slots_after(t, pc);
	while (n + after >= t->capacity) {
		uint64_t had = t->capacity;
		struct mf_node *nodes = t->grow ? t->grow(t->grow_arg, &t->capacity) : NULL;
		if (!nodes || t->capacity <= had)
			return 0;
		t->nodes = nodes;
	}
	if (n + after > UINT32_MAX - 1)
		return 0;
	if (n + 1 + after > t->path_hash_cap && mf_trie_path_hash_grow(t, n + 1 + after))
		return 0;
	t->path_hash[n] = hash;
	struct mf_node *node = &t->nodes[n];
	node->parent = parent;
	node->calls = 0;
	node->bytes = 0;
	if (pc == MF_TRIE_KEY_SIZES) {
		node->module = MF_MODULE_SIZES;
		node->rel_pc = 0;
	} else if (pc >= MF_TRIE_KEY_TAG(0) && pc < MF_TRIE_KEY_SPECIAL_MAX) {
		node->module = MF_MODULE_TAG;
		node->rel_pc = pc - MF_TRIE_KEY_TAG(0);
	} else if (pc == MF_TRIE_KEY_WEIGHT) {
		node->module = MF_MODULE_WEIGHT;
		node->rel_pc = 0;
	} else if (pc < MF_TRIE_KEY_SPECIAL_MAX) {
		node->module = pc == MF_TRIE_KEY_TRUNCATED ? MF_MODULE_TRUNCATED : MF_MODULE_ENTRY;
		node->rel_pc = pc == MF_TRIE_KEY_TRUNCATED ? 0 : pc - 1;
	} else {
		t->resolve(pc, node);
	}
	memset(node + 1, 0, after * sizeof(*node));
	/* Readers of a killed process's file trust node_count: publish after the node. */
	__atomic_store_n(t->count, n + 1 + after, __ATOMIC_RELEASE);
	if (2 * (t->index_used + 1) > t->index_mask + 1)
		mf_trie_index_grow(t);
	if (t->index_used < t->index_mask) { /* one slot stays empty: probes end */
		mf_trie_index_put(t->index, t->index_mask, hash, parent, pc, (uint32_t)n);
		t->index_used++;
	}
	return (uint32_t)n;
}

/* The child of parent for pc, whose path hash is hash. */
static inline uint32_t mf_trie_find(struct mf_trie *t, uint32_t parent, uintptr_t pc, uint32_t hash)
{
	uint64_t i = hash & t->index_mask;
	for (;;) {
		struct mf_trie_slot *s = &t->index[i];
		if (s->pc == pc && s->parent == parent && s->node)
			return s->node;
		if (!s->node)
			return mf_trie_add(t, parent, pc, hash);
		i = (i + 1) & t->index_mask;
	}
}

uint32_t mf_trie_child(struct mf_trie *t, uint32_t parent, uintptr_t pc)
{
	return mf_trie_find(t, parent, pc, mf_trie_hash(t->path_hash[parent], pc));
}

/* Asks for the index line where the child of a node of path hash parent_hash for pc would
 * be; returns that child's path hash. */
static inline uint32_t mf_trie_prefetch(const struct mf_trie *t, uint32_t parent_hash, uintptr_t pc)
{
	uint32_t hash = mf_trie_hash(parent_hash, pc);
	__builtin_prefetch(&t->index[hash & t->index_mask]);
	return hash;
}

/* A stack's i-th key: its frames' pcs, then the leaf. */
static inline uintptr_t mf_trie_key(void *const *pcs, int n, uintptr_t leaf, int i)
{
	return i < n ? (uintptr_t)pcs[i] : leaf;
}

uint32_t mf_trie_stack(struct mf_trie *t, void *const *pcs, int n, int truncated, uintptr_t leaf,
		       uint64_t hash, uint32_t *path, int *known)
{
	int from = path && !truncated ? *known : 0;
	if (path)
		*known = 0;
	uint32_t shape = (uint32_t)n | (truncated ? 1u << 31 : 0);
	if (!hash) {
		hash = MF_STACK_HASH_SEED;
		for (int i = 0; i < n; i++)
			hash = mf_stack_hash_step(hash, (uintptr_t)pcs[i]);
	}
	uint64_t h = (hash ^ leaf * 0xc2b2ae3d27d4eb4full ^ shape ^ (uint64_t)t->root << 40) *
		     0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	uintptr_t outer = n ? (uintptr_t)pcs[0] : 0, inner = n ? (uintptr_t)pcs[n - 1] : 0;
	struct mf_trie_memo *m = &t->memo[h & (t->memo_mask - 1)]; /* two ways */
	/* The memo saves a lookup per frame; a known path, all but the few frames below it. */
	if (from < n - 2 || !path)
		for (int way = 0; way < 2; way++)
			if (m[way].hash == h && m[way].node && m[way].shape == shape &&
			    m[way].inner == inner && m[way].outer == outer)
				return m[way].node;
	uint32_t node = truncated ? mf_trie_child(t, t->root, MF_TRIE_KEY_TRUNCATED) : t->root;
	if (truncated && !node)
		return 0;
	if (from > n)
		from = n;
	if (from)
		node = path[from - 1];
	/* The places of the lookups below node follow from the pcs: each one's index line is
	 * asked for MF_TRIE_AHEAD lookups before it, so that they wait for memory together,
	 * not one after another. (The frames, then the leaf.) */
	uint32_t at = t->path_hash[node], ahead = at;
	int j = from;
	for (; j <= n && j < from + MF_TRIE_AHEAD; j++)
		ahead = mf_trie_prefetch(t, ahead, mf_trie_key(pcs, n, leaf, j));
	for (int i = from; i <= n; i++) {
		if (j <= n)
			ahead = mf_trie_prefetch(t, ahead, mf_trie_key(pcs, n, leaf, j++));
		if (i == n && path && !truncated)
			*known = n;
		uintptr_t pc = mf_trie_key(pcs, n, leaf, i);
		at = mf_trie_hash(at, pc);
		if (!(node = mf_trie_find(t, node, pc, at)))
			return 0;
		if (i < n && path && !truncated)
			path[i] = node;
	}
	if (mf_unlikely(++t->memo_added > 2 * (t->memo_mask + 1)) &&
	    t->memo_mask + 1 < MF_TRIE_MEMO_SLOTS) {
		mf_trie_memo_grow(t);
		m = &t->memo[h & (t->memo_mask - 1)];
	}
	if (m[0].node)
		m[1] = m[0]; /* the older way goes */
	m[0] = (struct mf_trie_memo){h, inner, outer, node, shape};
	return node;
}
