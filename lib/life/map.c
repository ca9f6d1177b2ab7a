/* The address map of lifetimes: each live block's address to its size, its leaf and when it was
 * made (struct mf_life_slot), so that a free on any thread finds them.
 *
 * 64 shards by a hash of the block's 64 KiB region, each an open-addressing table (linear
 * probing, deletion by backward shift: no tombstones) behind a spinlock of its own, so threads
 * that allocate at once (each from its own arena) rarely meet (and while the process has one
 * thread, none is taken); a shard doubles at half full. A slot is 32 bytes, so a live block
 * costs 64 to 128 bytes. Within a shard a block's slot follows its place in its region
 * (mf_life_home): blocks made one after another, which lie side by side and are mostly freed
 * close together in time too, have their slots side by side, where a hash of the whole address
 * put each on a cache line and a page of its own (on node with lifetimes, that cut the L1
 * misses of the map's lookups by 39% in callgrind's simulation).
 *
 * Under sampling only the sampled calls' blocks enter the map, and a free learns from the
 * filter (mf_life_maybe: a hash and a byte read) that its block is not one of them. The heap
 * is the host's, so a block cannot carry a mark of its own; the filter is 1 MiB of counts.
 *
 * Address space is taken as blocks come (it counts against RLIMIT_AS, which the program may
 * live close to): a shard's first tables are pieces of pages that all shards share, and the
 * filter is made with the first table, only if 1 MiB is within a 256th of RLIMIT_AS. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "life/internal.h"
#include "thread.h"

#define MF_LIFE_SHARDS	  64
#define MF_LIFE_SLOTS_MIN 16
/* Tables of 16, 32 and 64 slots (512 B to 2 KiB) are pieces of pages that hold pieces of one
 * size; a page is unmapped when its last piece is given back. At most two tables a shard are
 * that small at once (the old and the new, in a grow), each on a page at worst. */
#define MF_LIFE_SMALL 3
#define MF_LIFE_PAGES (2 * MF_LIFE_SHARDS)

uint8_t *mf_life_filter;

/* The pages of small tables, and the filter's making: under a lock of their own, taken in a
 * shard's grow (which holds the shard's lock, if any). */
static struct {
	int lock;
	int filter_wanted, filter_tried; /* sampling; the filter's making was tried */
	struct {
		char *at;      /* NULL: none */
		uint8_t shift; /* the pieces' size, 1 << shift */
		uint8_t used;  /* a bit for each piece */
	} page[MF_LIFE_PAGES];
} mf_life_pages;

void mf_life_map_sampled(void)
{
	mf_life_pages.filter_wanted = 1;
}

/* (with the first table, before any block enters the map: without it, every free is looked
 * up, slower and as exact; so it is never made later, once a block may have gone in) */
static void mf_life_filter_make(void)
{
	mf_life_pages.filter_tried = 1;
	size_t size = (size_t)1 << MF_LIFE_FILTER_BITS;
	if (!mf_life_pages.filter_wanted || mf_prof_as_share() < size)
		return;
	void *f = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f != MAP_FAILED)
		__atomic_store_n(&mf_life_filter, (uint8_t *)f, __ATOMIC_RELEASE);
}

/* A table of n slots, zeroed; NULL without memory. */
static struct mf_life_slot *mf_life_table_new(uint64_t n)
{
	size_t size = n * sizeof(struct mf_life_slot);
	if (n >= MF_LIFE_SLOTS_MIN << MF_LIFE_SMALL) {
		void *t =
		    mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return t == MAP_FAILED ? NULL : t;
	}
	unsigned shift = (unsigned)__builtin_ctzll(size), pieces = 4096u >> shift;
	int spare = -1;
	for (int i = 0; i < MF_LIFE_PAGES; i++) {
		if (!mf_life_pages.page[i].at) {
			spare = spare < 0 ? i : spare;
			continue;
		}
		unsigned used = mf_life_pages.page[i].used;
		if (mf_life_pages.page[i].shift != shift || used == (1u << pieces) - 1)
			continue;
		unsigned k = (unsigned)__builtin_ctz(~used);
		mf_life_pages.page[i].used = (uint8_t)(used | 1u << k);
		return memset(mf_life_pages.page[i].at + ((size_t)k << shift), 0, size);
	}
	void *page = spare < 0 ? MAP_FAILED
			       : mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	mf_life_pages.page[spare].at = page;
	mf_life_pages.page[spare].shift = (uint8_t)shift;
	mf_life_pages.page[spare].used = 1;
	return page;
}

static void mf_life_table_free(struct mf_life_slot *t, uint64_t n)
{
	size_t size = n * sizeof(*t);
	if (n >= MF_LIFE_SLOTS_MIN << MF_LIFE_SMALL) {
		munmap(t, size);
		return;
	}
	char *at = (char *)((uintptr_t)t & ~(uintptr_t)4095);
	for (int i = 0; i < MF_LIFE_PAGES; i++) {
		if (mf_life_pages.page[i].at != at)
			continue;
		mf_life_pages.page[i].used &=
		    (uint8_t) ~(1u << (((char *)t - at) >> __builtin_ctzll(size)));
		if (!mf_life_pages.page[i].used) {
			munmap(at, 4096);
			mf_life_pages.page[i].at = NULL;
		}
		return;
	}
}

/* The filter's count for addr: one more, or one less. Counts are shared by blocks of any
 * shard (and changed only for sampled blocks, one call in N): a compare-and-swap. */
static inline void mf_life_filter_add(uintptr_t addr, int d)
{
	if (!mf_life_filter)
		return;
	uint8_t *c = &mf_life_filter[mf_life_filter_at((const void *)addr)];
	uint8_t v = __atomic_load_n(c, __ATOMIC_RELAXED);
	/* (255: too many to know when the last goes; never 0 again) */
	while (v != 255 && !__atomic_compare_exchange_n(c, &v, (uint8_t)(v + d), 1,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

struct mf_life_shard {
	_Alignas(64) int lock;
	struct mf_life_slot *slot;
	uint64_t mask, used;
};

static struct mf_life_shard mf_life_shards[MF_LIFE_SHARDS];

/* A block's shard, and where in it the map looks for the block first, in slots: both from
 * one hash of the 64 KiB region it lies in, the shard its top 6 bits. The place is the
 * block's own (16-aligned) shifted by the hash: the blocks of a region (a heap's, handed out
 * side by side, one after another) are looked for side by side, in a run of their own, and
 * blocks at the same place in different regions (page-aligned ones, say) are not. */
static inline uint64_t mf_life_region_hash(uintptr_t addr)
{
	return (uint64_t)(addr >> 16) * 0x9e3779b97f4a7c15ull;
}

static struct mf_life_shard *mf_life_shard(uintptr_t addr)
{
	return &mf_life_shards[mf_life_region_hash(addr) >> 58];
}

static inline uint64_t mf_life_home(uintptr_t addr, uint64_t mask)
{
	return ((addr >> 4) + (mf_life_region_hash(addr) >> 40)) & mask;
}

static void mf_life_lock(struct mf_life_shard *s)
{
	mf_spin_take(&s->lock);
}

static void mf_life_unlock(struct mf_life_shard *s)
{
	mf_spin_give(&s->lock);
}

/* A shard's lock for a block's way in or out, taken unless the process has one thread: then,
 * as glibc's own malloc does (it takes no lock then either), none is needed: no other thread
 * can be in the map, a signal handler's call in this thread stays out of it (life_busy), and
 * the thread becomes one of several only by creating another, outside the map. Whether it
 * was taken. */
static inline int mf_life_enter(struct mf_life_shard *s)
{
	if (__libc_single_threaded)
		return 0;
	mf_life_lock(s);
	return 1;
}

static inline void mf_life_leave(struct mf_life_shard *s, int locked)
{
	if (locked)
		mf_life_unlock(s);
}

static void mf_life_put(struct mf_life_slot *slot, uint64_t mask, const struct mf_life_slot *x)
{
	uint64_t i = mf_life_home(x->addr, mask);
	while (slot[i].addr && slot[i].addr != x->addr)
		i = (i + 1) & mask;
	slot[i] = *x;
}

/* Twice the slots (the first time: MF_LIFE_SLOTS_MIN). 0, or -1 without memory. */
static MF_NOINLINE int mf_life_grow(struct mf_life_shard *s)
{
	uint64_t n = s->slot ? (s->mask + 1) * 2 : MF_LIFE_SLOTS_MIN;
	int saved = errno;
	mf_spin_take(&mf_life_pages.lock);
	if (!mf_life_pages.filter_tried)
		mf_life_filter_make();
	struct mf_life_slot *slot = mf_life_table_new(n);
	mf_spin_give(&mf_life_pages.lock);
	if (!slot) {
		errno = saved;
		return -1;
	}
	if (s->slot) {
		for (uint64_t i = 0; i <= s->mask; i++)
			if (s->slot[i].addr)
				mf_life_put(slot, n - 1, &s->slot[i]);
		mf_spin_take(&mf_life_pages.lock);
		mf_life_table_free(s->slot, s->mask + 1);
		mf_spin_give(&mf_life_pages.lock);
	}
	errno = saved;
	s->slot = slot;
	s->mask = n - 1;
	return 0;
}

/* A slot's fields, read one by one as they were written (a wider read of a slot written just
 * before, as a block freed and allocated again at once makes, would wait for those writes). */
static inline struct mf_life_slot mf_life_slot_read(const struct mf_life_slot *x)
{
	return (struct mf_life_slot){x->addr, x->size, x->file, x->node, x->born};
}

/* Takes the slot of addr, of a block made by tick born_by, out of the shard (held) into
 * *out; 0, or -1 if there is none. */
static int mf_life_take(struct mf_life_shard *s, uintptr_t addr, uint64_t born_by,
			struct mf_life_slot *out)
{
	if (!s->slot)
		return -1;
	uint64_t mask = s->mask, i = mf_life_home(addr, mask);
	while (s->slot[i].addr != addr) {
		if (!s->slot[i].addr)
			return -1;
		i = (i + 1) & mask;
	}
	if (mf_unlikely(s->slot[i].born > born_by))
		return -1;
	*out = mf_life_slot_read(&s->slot[i]);
	mf_life_filter_add(addr, -1);
	/* Backward shift: each later slot of the run moves into the hole if its home is not
	 * between the hole and itself. */
	for (uint64_t j = (i + 1) & mask; s->slot[j].addr; j = (j + 1) & mask) {
		uint64_t home = mf_life_home(s->slot[j].addr, mask);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->slot[i] = s->slot[j];
			i = j;
		}
	}
	s->slot[i].addr = 0;
	s->used--;
	return 0;
}

MF_INLINE int mf_life_map_put(const struct mf_life_slot *x, struct mf_life_slot *stale)
{
	struct mf_life_shard *s = mf_life_shard(x->addr);
	int locked = mf_life_enter(s), put = 0;
	stale->addr = 0;
	if ((s->slot && 2 * (s->used + 1) <= s->mask + 1) || mf_life_grow(s) == 0) {
		uint64_t i = mf_life_home(x->addr, s->mask);
		struct mf_life_slot *y;
		while ((y = &s->slot[i])->addr && y->addr != x->addr)
			i = (i + 1) & s->mask;
		if (mf_unlikely(y->addr)) {
			*stale = mf_life_slot_read(y);
		} else {
			s->used++;
			mf_life_filter_add(x->addr, 1);
		}
		y->size = x->size;
		y->file = x->file;
		y->node = x->node;
		y->born = x->born;
		y->addr = x->addr;
		put = 1;
	}
	mf_life_leave(s, locked);
	return put;
}

MF_INLINE int mf_life_map_take(uintptr_t addr, uint64_t born_by, struct mf_life_slot *out)
{
	struct mf_life_shard *s = mf_life_shard(addr);
	int locked = mf_life_enter(s);
	int found = mf_life_take(s, addr, born_by, out) == 0;
	mf_life_leave(s, locked);
	return found;
}

/* No thread may be in the map when the child is made; but a signal handler's fork that
 * interrupted this thread in the map would wait for itself: then the child only starts over. */
static int mf_life_held;

void mf_life_map_prefork(void)
{
	if (mf_tls.life_busy)
		return;
	for (int i = 0; i < MF_LIFE_SHARDS; i++)
		mf_life_lock(&mf_life_shards[i]);
	mf_life_held = 1;
}

void mf_life_map_postfork_parent(void)
{
	if (!mf_life_held)
		return;
	mf_life_held = 0;
	for (int i = 0; i < MF_LIFE_SHARDS; i++)
		mf_life_unlock(&mf_life_shards[i]);
}

void mf_life_map_unlock_all(void)
{
	mf_life_held = 0;
	mf_life_pages.lock = 0;
	for (int i = 0; i < MF_LIFE_SHARDS; i++)
		mf_life_shards[i].lock = 0;
}

void mf_life_map_postfork_child(void)
{
	mf_life_held = 0;
	mf_life_pages.lock = 0;
	for (int i = 0; i < MF_LIFE_SHARDS; i++) {
		struct mf_life_shard *s = &mf_life_shards[i];
		if (s->slot)
			mf_life_table_free(s->slot, s->mask + 1);
		*s = (struct mf_life_shard){0};
	}
	if (mf_life_filter) /* (its pages read as zeros again) */
		madvise(mf_life_filter, (size_t)1 << MF_LIFE_FILTER_BITS, MADV_DONTNEED);
}
