/* The stack trie: nodes in an array the owner provides (the thread's file mapping), found
 * through an open-addressing index keyed by (parent, pc) in anonymous memory, and a memo of
 * whole stacks' leaves (most calls come from a stack seen before: one lookup then replaces
 * one index probe per frame). A node's place in the index is a hash of its path, so a new
 * stack's probes can all be fetched from memory at once. Pure data structure: no I/O but the
 * owner's grow callback; no malloc; one thread at a time. */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fork.h"
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

/* The index: open addressing, keyed by (parent, pc), a key's home the low bits of its path
 * hash, probed forward from there. A probe that passes the last home runs on into a tail of
 * MF_TRIE_INDEX_TAIL slots rather than wrap to the first, and the tail's last slot stays
 * empty, so that every probe ends. Not wrapping lets the index double where it lies: in the
 * room, or in its mapping, grown (mf_pages_grow), whose pages keep their place, none copied or
 * faulted in again. (Growing into a new mapping each time, the index of cc1 on a file of a few
 * hundred lines faulted in 960 pages, twice its final size.) */
static size_t mf_trie_index_len(uint64_t homes)
{
	return (homes + MF_TRIE_INDEX_TAIL) * sizeof(struct mf_trie_slot);
}

/* Is the index (of that many homes) in the room? */
static int mf_trie_index_in_room(const struct mf_trie *t, uint64_t homes)
{
	return t->room && homes <= MF_TRIE_INDEX_ROOM;
}

/* Puts s at the first free slot from its home; -1, not put, where that is the tail's last. */
static int mf_trie_index_put(struct mf_trie_slot *index, uint64_t mask, uint32_t hash,
			     struct mf_trie_slot s)
{
	uint64_t i = hash & mask;
	while (index[i].node)
		i++;
	if (i == mask + MF_TRIE_INDEX_TAIL)
		return -1;
	index[i] = s;
	return 0;
}

/* Doubles the index where it lies, or in a mapping of its own as it leaves the room; on
 * failure the old one stays (just fuller). A key keeps its home, or moves to its home plus the
 * old number of homes. Taken in order from the first slot, each goes to the first free slot
 * from its new home: below the old end, that is at or before its old slot (free now), past
 * keys this pass has put there; above, past keys this pass has put there alone, the tail's
 * having been taken out first (they are put back last). So no probe crosses a key that has
 * yet to move, and a key that moves later leaves no gap before one already moved. */
static void mf_trie_index_double(struct mf_trie *t)
{
	uint64_t homes = t->index_mask + 1, mask = 2 * homes - 1;
	struct mf_trie_slot *index = t->index;
	if (mf_trie_index_in_room(t, 2 * homes)) {
		memset(index + homes + MF_TRIE_INDEX_TAIL, 0, homes * sizeof(*index));
	} else if (mf_trie_index_in_room(t, homes)) {
		if (!(index = mf_pages_new(mf_trie_index_len(2 * homes))))
			return;
		memcpy(index, t->index, mf_trie_index_len(homes));
		/* (memory for other uses again, as zero pages: its whole pages) */
		madvise(t->index, mf_trie_index_len(homes) & ~(size_t)(MF_PAGE_SIZE - 1),
			MADV_DONTNEED);
	} else if (!(index = mf_pages_grow(index, mf_trie_index_len(homes),
					   mf_trie_index_len(2 * homes)))) {
		return;
	}
	t->index = index; /* (moved, perhaps: the old place is gone) */
	struct mf_trie_slot tail[MF_TRIE_INDEX_TAIL];
	uint64_t spilled = 0;
	for (uint64_t i = homes; i < homes + MF_TRIE_INDEX_TAIL; i++)
		if (index[i].node) {
			tail[spilled++] = index[i];
			index[i].node = 0;
		}
	/* (each put finds room: a key that moves up lands at most at its old slot plus the old
	 * number of homes, so the tail's keys, at most 63, find the new tail's first 63 free) */
	for (uint64_t i = 0; i < homes; i++)
		if (index[i].node) {
			struct mf_trie_slot s = index[i];
			index[i].node = 0;
			mf_trie_index_put(index, mask, t->path_hash[s.node], s);
		}
	for (uint64_t i = 0; i < spilled; i++)
		mf_trie_index_put(index, mask, t->path_hash[tail[i].node], tail[i]);
	t->index_mask = mask;
}

/* Doubles it with every signal blocked: a handler that left the call for good (siglongjmp)
 * would leave the index half moved, where the thread's next call would look. */
static void mf_trie_index_grow(struct mf_trie *t)
{
	uint64_t all = MF_SIGNALS_ALL, mask_was;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &mask_was, 8);
	mf_trie_index_double(t);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mask_was, NULL, 8);
}

/* Room in path_hash for node slots [0, need): twice as many as before, or need; out of the
 * room into a mapping, or its mapping grown. 0 or -1. */
static int mf_trie_path_hash_grow(struct mf_trie *t, uint64_t need)
{
	uint64_t had = t->path_hash_cap, cap = had * 2 > need ? had * 2 : need;
	uint32_t *hash;
	if (t->room && had <= MF_TRIE_PATH_HASH_ROOM) {
		if (!(hash = mf_pages_new(cap * sizeof(*hash))))
			return -1;
		memcpy(hash, t->path_hash, had * sizeof(*hash));
		madvise(t->path_hash, had * sizeof(*hash), MADV_DONTNEED); /* (zero pages again) */
	} else if (!(hash =
			 mf_pages_grow(t->path_hash, had * sizeof(*hash), cap * sizeof(*hash)))) {
		return -1;
	}
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
	if (room)
		t->index = memset(room->index, 0, mf_trie_index_len(MF_TRIE_INDEX_MIN));
	else
		t->index = mf_pages_new(mf_trie_index_len(MF_TRIE_INDEX_MIN));
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
	if (t->index && !mf_trie_index_in_room(t, t->index_mask + 1))
		munmap(t->index, mf_trie_index_len(t->index_mask + 1));
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
	memset(t->index, 0, mf_trie_index_len(t->index_mask + 1));
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
	/* A key that finds no room (the tail's last slot: after a doubling failed, the index
	 * fills past half) doubles it whatever its load, once; left out still, a lookup of it
	 * makes another node each time, which readers add up with this one. */
	struct mf_trie_slot s = {.pc = pc, .parent = parent, .node = (uint32_t)n};
	int put = mf_trie_index_put(t->index, t->index_mask, hash, s);
	if (put) {
		mf_trie_index_grow(t);
		put = mf_trie_index_put(t->index, t->index_mask, hash, s);
	}
	if (!put)
		t->index_used++;
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
		i++; /* (into the tail, never past its last slot: that one stays empty) */
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
