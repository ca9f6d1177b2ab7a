/* The address map of lifetimes: each live block's address to its size, its leaf and when it was
 * made (struct mf_life_slot), so that a free on any thread finds them.
 *
 * 64 shards by address hash, each an open-addressing table (linear probing, deletion by
 * backward shift: no tombstones) behind a spinlock of its own, so threads that allocate at
 * once rarely meet (and while the process has one thread, none is taken); a shard doubles at
 * half full. A slot is 32 bytes, so a live block costs 64 to 128 bytes.
 *
 * Under sampling only the sampled calls' blocks enter the map, and a free learns from the
 * filter (mf_life_maybe: a hash and a byte read) that its block is not one of them. The heap
 * is the host's, so a block cannot carry a mark of its own; the filter is 1 MiB of counts,
 * each changed only under the lock of the shard its hashes fall in. */
#include "config.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>

#include "life/internal.h"

#define MF_LIFE_SHARDS	  64
#define MF_LIFE_SLOTS_MIN 512

uint8_t *mf_life_filter;

void mf_life_map_sampled(void)
{
	/* (without it, every free is looked up: slower, as exact) */
	void *f = mmap(NULL, (size_t)1 << MF_LIFE_FILTER_BITS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mf_life_filter = f == MAP_FAILED ? NULL : f;
}

_Static_assert(MF_LIFE_SHARDS == 64 && MF_LIFE_FILTER_BITS >= 6,
	       "a filter count's hashes fall in one shard (the top 6 bits)");

/* The filter's count for hash h, by the holder of h's shard: one more, or one less. */
static void mf_life_filter_add(uint64_t h, int d)
{
	if (!mf_life_filter)
		return;
	uint8_t *c = &mf_life_filter[h >> (64 - MF_LIFE_FILTER_BITS)];
	uint8_t v = *c;
	if (v != 255) /* (255: too many to know when the last goes; never 0 again) */
		__atomic_store_n(c, (uint8_t)(v + d), __ATOMIC_RELAXED);
}

struct mf_life_shard {
	_Alignas(64) int lock;
	struct mf_life_slot *slot;
	uint64_t mask, used;
};

static struct mf_life_shard mf_life_shards[MF_LIFE_SHARDS];

/* (mf_life_maybe takes its top bits from the product: the shift changes only the low 33) */
static inline uint64_t mf_life_hash(uintptr_t addr)
{
	uint64_t h = (uint64_t)(addr >> 4) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

/* (a filter's count, the hash's top MF_LIFE_FILTER_BITS, falls in one shard) */
static struct mf_life_shard *mf_life_shard(uint64_t h)
{
	return &mf_life_shards[h >> 58];
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
	uint64_t i = mf_life_hash(x->addr) & mask;
	while (slot[i].addr && slot[i].addr != x->addr)
		i = (i + 1) & mask;
	slot[i] = *x;
}

/* Twice the slots (the first time: MF_LIFE_SLOTS_MIN). 0, or -1 without memory. */
static MF_NOINLINE int mf_life_grow(struct mf_life_shard *s)
{
	uint64_t n = s->slot ? (s->mask + 1) * 2 : MF_LIFE_SLOTS_MIN;
	int saved = errno;
	struct mf_life_slot *slot = mmap(NULL, n * sizeof(*slot), PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slot == MAP_FAILED) {
		errno = saved;
		return -1;
	}
	if (s->slot) {
		for (uint64_t i = 0; i <= s->mask; i++)
			if (s->slot[i].addr)
				mf_life_put(slot, n - 1, &s->slot[i]);
		munmap(s->slot, (s->mask + 1) * sizeof(*slot));
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

/* Takes the slot of addr (of hash h) out of the shard (held) into *out; 0, or -1 if there is
 * none. */
static int mf_life_take(struct mf_life_shard *s, uintptr_t addr, uint64_t h,
			struct mf_life_slot *out)
{
	if (!s->slot)
		return -1;
	uint64_t mask = s->mask, i = h & mask;
	while (s->slot[i].addr != addr) {
		if (!s->slot[i].addr)
			return -1;
		i = (i + 1) & mask;
	}
	*out = mf_life_slot_read(&s->slot[i]);
	mf_life_filter_add(h, -1);
	/* Backward shift: each later slot of the run moves into the hole if its home is not
	 * between the hole and itself. */
	for (uint64_t j = (i + 1) & mask; s->slot[j].addr; j = (j + 1) & mask) {
		uint64_t home = mf_life_hash(s->slot[j].addr) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->slot[i] = s->slot[j];
			i = j;
		}
	}
	s->slot[i].addr = 0;
	s->used--;
	return 0;
}

int mf_life_map_put(const struct mf_life_slot *x, struct mf_life_slot *stale)
{
	uint64_t h = mf_life_hash(x->addr);
	struct mf_life_shard *s = mf_life_shard(h);
	int locked = mf_life_enter(s), put = 0;
	stale->addr = 0;
	if ((s->slot && 2 * (s->used + 1) <= s->mask + 1) || mf_life_grow(s) == 0) {
		uint64_t i = h & s->mask;
		struct mf_life_slot *y;
		while ((y = &s->slot[i])->addr && y->addr != x->addr)
			i = (i + 1) & s->mask;
		if (mf_unlikely(y->addr)) {
			*stale = mf_life_slot_read(y);
		} else {
			s->used++;
			mf_life_filter_add(h, 1);
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

int mf_life_map_take(uintptr_t addr, struct mf_life_slot *out)
{
	uint64_t h = mf_life_hash(addr);
	struct mf_life_shard *s = mf_life_shard(h);
	int locked = mf_life_enter(s);
	int found = mf_life_take(s, addr, h, out) == 0;
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

void mf_life_map_postfork_child(void)
{
	mf_life_held = 0;
	for (int i = 0; i < MF_LIFE_SHARDS; i++) {
		struct mf_life_shard *s = &mf_life_shards[i];
		if (s->slot)
			munmap(s->slot, (s->mask + 1) * sizeof(*s->slot));
		*s = (struct mf_life_shard){0};
	}
	if (mf_life_filter) /* (its pages read as zeros again) */
		madvise(mf_life_filter, (size_t)1 << MF_LIFE_FILTER_BITS, MADV_DONTNEED);
}
