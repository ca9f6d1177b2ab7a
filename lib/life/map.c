/* The address map of lifetimes: each live block's address to its size, its leaf and when it was
 * made (struct mf_life_slot), so that a free on any thread finds them.
 *
 * Each thread file has a table of its own (an owner), and a directory says which owner each
 * 64 KiB region of the heap belongs to: the first thread that puts a block of a region in the
 * map claims it (one compare-and-swap per region), and its blocks there go into its own table.
 * A thread allocates from an arena of its own, so its blocks lie in its own regions, and its
 * frees of them touch its table and a line of the directory that nobody writes any more. A
 * block of a region claimed by another thread (an arena shared by more threads than glibc has
 * arenas, or one a thread that ended left to a new one), or whose directory entry holds
 * another region, goes into the shared map: 64 shards by a hash of the region. A free reads
 * the directory: the region's owner's table has the block, or else the shared map does (a
 * region's owner never changes while its table may hold a block of it). Each owner's table
 * and its thread file's lifetime counts are its thread's alone, which enters them with a store
 * and a load, no locked instruction (bias.c), as long as no other thread frees its blocks;
 * the first that does makes the table shared, and from then on every thread takes its lock.
 * While the process has one thread, no lock is taken at all. (Other ways to find a block's owner
 * were weighed: a per-thread map with a lock-free queue of frees to its owner leaves a block freed
 * by another thread counted live until the owner runs again, so a peak or a snapshot taken
 * meanwhile is wrong; the arena's own header is glibc's inside, and another allocator has none.)
 *
 * Each table is open addressing (linear probing, deletion by backward shift: no tombstones),
 * doubled at half full. A slot is 32 bytes, so a live block costs 64 to 128 bytes; an owner 64
 * bytes, in pages of 256 as threads come; the directory 256 KiB of address space, touched as
 * regions are claimed. Within a table a block's slot follows its place in its region
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
 * live close to): a table's first sizes are pieces of pages that all tables share, and the
 * filter and the directory are made with the first table, each only if it is within a 256th
 * of RLIMIT_AS (without the directory every block goes into the shared map). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "life/internal.h"
#include "thread.h"

#define MF_LIFE_SHARDS	  64
#define MF_LIFE_SLOTS_MIN 16
/* Tables of 16, 32 and 64 slots (512 B to 2 KiB) are pieces of pages that hold pieces of one
 * size; a page is unmapped when its last piece is given back. When every page of the pool is
 * in use, such a table has a page of its own. */
#define MF_LIFE_SMALL 3
#define MF_LIFE_PAGES (2 * MF_LIFE_SHARDS)
/* The directory: an entry per hash of a region, region << 16 | owner's file number (0: none) */
#define MF_LIFE_DIR_BITS 15
#define MF_LIFE_OWNERS	 256 /* owners to a page of them */

uint8_t *mf_life_filter;
static uint64_t *mf_life_dir;

/* The pages of small tables, and the filter's and the directory's making: under a lock of
 * their own, taken in a table's grow (which holds the table's lock, if any). */
static struct {
	int lock;
	int filter_wanted, made; /* sampling; the filter and directory's making was tried */
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

static void *mf_life_map_new(size_t size)
{
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

/* (with the first table, before any block enters the map: without the filter, every free is
 * looked up, slower and as exact; without the directory every block goes into the shared map;
 * so neither is made later, once a block may have gone in) */
static void mf_life_make(void)
{
	mf_life_pages.made = 1;
	size_t size = (size_t)1 << MF_LIFE_FILTER_BITS, dir = sizeof(uint64_t) << MF_LIFE_DIR_BITS;
	void *m;
	if (mf_prof_as_share() >= dir && (m = mf_life_map_new(dir)))
		__atomic_store_n(&mf_life_dir, (uint64_t *)m, __ATOMIC_RELEASE);
	if (mf_life_pages.filter_wanted && mf_prof_as_share() >= size &&
	    (m = mf_life_map_new(size)))
		__atomic_store_n(&mf_life_filter, (uint8_t *)m, __ATOMIC_RELEASE);
}

/* A table of n slots, zeroed; NULL without memory. */
static struct mf_life_slot *mf_life_table_new(uint64_t n)
{
	size_t size = n * sizeof(struct mf_life_slot);
	if (n >= MF_LIFE_SLOTS_MIN << MF_LIFE_SMALL)
		return mf_life_map_new(size);
	unsigned shift = (unsigned)__builtin_ctzll(size), pieces = MF_PAGE_SIZE >> shift;
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
	char *page = mf_life_map_new(MF_PAGE_SIZE);
	if (page && spare >= 0) {
		mf_life_pages.page[spare].at = page;
		mf_life_pages.page[spare].shift = (uint8_t)shift;
		mf_life_pages.page[spare].used = 1;
	}
	return (struct mf_life_slot *)page;
}

static void mf_life_table_free(struct mf_life_slot *t, uint64_t n)
{
	size_t size = n * sizeof(*t);
	if (n >= MF_LIFE_SLOTS_MIN << MF_LIFE_SMALL) {
		munmap(t, size);
		return;
	}
	char *at = (char *)((uintptr_t)t & ~(uintptr_t)(MF_PAGE_SIZE - 1));
	for (int i = 0; i < MF_LIFE_PAGES; i++) {
		if (mf_life_pages.page[i].at != at)
			continue;
		mf_life_pages.page[i].used &=
		    (uint8_t) ~(1u << (((char *)t - at) >> __builtin_ctzll(size)));
		if (!mf_life_pages.page[i].used) {
			munmap(at, MF_PAGE_SIZE);
			mf_life_pages.page[i].at = NULL;
		}
		return;
	}
	munmap(at, MF_PAGE_SIZE); /* (a page of its own) */
}

/* The filter's count for addr: one more, or one less. Counts are shared by blocks of any
 * table (and changed only for sampled blocks, one call in N): a compare-and-swap. */
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

/* A table: a shard of the shared map, or an owner's own. An owner's thread enters its table
 * without the lock while shared is 0 (bias.c); shared: 1 once another thread needed it (or
 * when membarrier is not to be had), 2 added while a fork holds every table. */
struct mf_life_shard {
	_Alignas(64) int lock;
	int shared, busy; /* (owners) busy: the owner's thread is in it without the lock */
	struct mf_life_slot *slot;
	uint64_t mask, used;
};

static struct mf_life_shard mf_life_shards[MF_LIFE_SHARDS];
/* The owners by file number, in pages of MF_LIFE_OWNERS made as files are numbered (and never
 * unmapped: a free on any thread may read one). */
static struct mf_life_shard *mf_life_owners[MF_LIFE_FILES / MF_LIFE_OWNERS];
/* How the thread entered the owner it holds (mf_life_map_take's hold): mf_life_enter's. */
static MF_TLS int mf_life_held_how;

/* Every owner of a page shared from the start (no membarrier to be had). */
static void mf_life_page_shared(struct mf_life_shard *page)
{
	for (int i = 0; i < MF_LIFE_OWNERS; i++)
		__atomic_store_n(&page[i].shared, 1, __ATOMIC_RELEASE);
}

int mf_life_map_file(uint32_t file)
{
	struct mf_life_shard **page = &mf_life_owners[file / MF_LIFE_OWNERS];
	if (__atomic_load_n(page, __ATOMIC_ACQUIRE))
		return 0;
	void *m = mf_life_map_new(MF_LIFE_OWNERS * sizeof(struct mf_life_shard));
	if (!m)
		return -1;
	if (!__atomic_load_n(&mf_life_bias, __ATOMIC_RELAXED))
		mf_life_page_shared(m);
	__atomic_store_n(page, (struct mf_life_shard *)m, __ATOMIC_RELEASE);
	return 0;
}

/* The table of the owner of file (numbered: its page is made). */
static inline struct mf_life_shard *mf_life_owner(uint32_t file)
{
	return &__atomic_load_n(&mf_life_owners[file / MF_LIFE_OWNERS],
				__ATOMIC_ACQUIRE)[file % MF_LIFE_OWNERS];
}

/* A block's shard, and where in a table the map looks for the block first, in slots: both
 * from one hash of the 64 KiB region it lies in, the shard its top 6 bits, its directory
 * entry the top MF_LIFE_DIR_BITS. The place is the block's own (16-aligned) shifted by the
 * hash: the blocks of a region (a heap's, handed out side by side, one after another) are
 * looked for side by side, in a run of their own, and blocks at the same place in different
 * regions (page-aligned ones, say) are not. */
static inline uint64_t mf_life_region_hash(uintptr_t addr)
{
	return (uint64_t)(addr >> 16) * 0x9e3779b97f4a7c15ull;
}

static struct mf_life_shard *mf_life_shard(uintptr_t addr)
{
	return &mf_life_shards[mf_life_region_hash(addr) >> 58];
}

static inline uint64_t *mf_life_dir_at(uint64_t *dir, uintptr_t addr)
{
	return &dir[mf_life_region_hash(addr) >> (64 - MF_LIFE_DIR_BITS)];
}

/* What addr's directory entry holds when file owns its region. */
static inline uint64_t mf_life_dir_entry(uintptr_t addr, uint32_t file)
{
	return (uint64_t)(addr >> 16) << 16 | file;
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

enum { MF_LIFE_OPEN, MF_LIFE_LOCKED, MF_LIFE_OWN };

/* Another thread needs owner s, which its thread may be in without the lock (s locked): from
 * now on every thread takes the lock, once the owner is out (bias.c). */
static MF_NOINLINE void mf_life_unbias(struct mf_life_shard *s)
{
	__atomic_store_n(&s->shared, 1, __ATOMIC_RELAXED);
	mf_life_bias_barrier();
	mf_spin_until_zero(&s->busy, 0); /* (the owner out) */
}

/* Entering a table for a block's way in or out (file: the owner's number, 0 for a shard of the
 * shared map); how it was entered, for mf_life_leave. While the process has one thread, no
 * lock is needed, as glibc's own malloc takes none then: no other thread can be in the map, a
 * signal handler's call in this thread stays out of it (life_busy), and the thread becomes
 * one of several only by creating another, outside the map. The owner's thread enters its
 * table by a store (bias.c); any other takes the lock, and the first to find the table not
 * shared makes it so. */
static inline int mf_life_enter(struct mf_life_shard *s, uint32_t file)
{
	if (__libc_single_threaded)
		return MF_LIFE_OPEN;
	int own = file && file == mf_tls.life_file;
	if (own) {
		__atomic_store_n(&s->busy, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* (the other side's barrier orders it) */
		if (mf_likely(!__atomic_load_n(&s->shared, __ATOMIC_ACQUIRE)))
			return MF_LIFE_OWN;
		__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
	}
	mf_life_lock(s);
	if (file && !own && mf_unlikely(!__atomic_load_n(&s->shared, __ATOMIC_ACQUIRE)))
		mf_life_unbias(s);
	return MF_LIFE_LOCKED;
}

static inline void mf_life_leave(struct mf_life_shard *s, int how)
{
	if (how == MF_LIFE_OWN)
		__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
	else if (how == MF_LIFE_LOCKED)
		mf_life_unlock(s);
}

void mf_life_map_hold(uint32_t file)
{
	mf_life_held_how = mf_life_enter(mf_life_owner(file), file);
}

void mf_life_map_release(uint32_t file)
{
	if (mf_life_held_how != MF_LIFE_OPEN) /* (one thread: not entered, nothing to look up) */
		mf_life_leave(mf_life_owner(file), mf_life_held_how);
}

void mf_life_map_owner_gone(uint32_t file)
{
	if (!file)
		return;
	struct mf_life_shard *s = mf_life_owner(file); /* (locked: a fork marks it too) */
	mf_life_lock(s);
	__atomic_store_n(&s->shared, s->shared | 1, __ATOMIC_RELEASE);
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
	if (!mf_life_pages.made)
		mf_life_make();
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

/* Takes the slot of addr, of a block made by tick born_by, out of the table (held) into
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

/* The table a block at addr of file goes into: its owner's if file owns the region (claimed
 * now if nobody does), else the shared map's shard; entered (*how: mf_life_enter's). */
static inline struct mf_life_shard *mf_life_table_for(uintptr_t addr, uint32_t file, int *how)
{
	uint64_t *dir = __atomic_load_n(&mf_life_dir, __ATOMIC_ACQUIRE);
	if (mf_likely(dir != NULL)) {
		uint64_t *e = mf_life_dir_at(dir, addr), want = mf_life_dir_entry(addr, file);
		uint64_t was = __atomic_load_n(e, __ATOMIC_RELAXED);
		if (mf_likely(was == want) ||
		    (!was && __atomic_compare_exchange_n(e, &was, want, 0, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED))) {
			struct mf_life_shard *s = mf_life_owner(file);
			*how = mf_life_enter(s, file);
			return s;
		}
	}
	struct mf_life_shard *s = mf_life_shard(addr);
	*how = mf_life_enter(s, 0);
	return s;
}

MF_INLINE int mf_life_map_put(const struct mf_life_slot *x, struct mf_life_slot *stale)
{
	int how, put = 0;
	struct mf_life_shard *s = mf_life_table_for(x->addr, x->file, &how);
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
	mf_life_leave(s, how);
	return put;
}

MF_INLINE int mf_life_map_take(uintptr_t addr, uint64_t born_by, struct mf_life_slot *out, int hold)
{
	uint64_t *dir = __atomic_load_n(&mf_life_dir, __ATOMIC_ACQUIRE);
	if (mf_likely(dir != NULL)) {
		uint64_t e = __atomic_load_n(mf_life_dir_at(dir, addr), __ATOMIC_RELAXED);
		uint32_t file = (uint32_t)(e & 0xffff);
		if (e >> 16 == addr >> 16 && file) {
			struct mf_life_shard *s = mf_life_owner(file);
			int how = mf_life_enter(s, file);
			if (mf_life_take(s, addr, born_by, out) == 0) {
				if (hold)
					mf_life_held_how = how;
				else
					mf_life_leave(s, how);
				return 1;
			}
			mf_life_leave(s, how);
		}
	}
	struct mf_life_shard *s = mf_life_shard(addr);
	int how = mf_life_enter(s, 0);
	int found = mf_life_take(s, addr, born_by, out) == 0;
	mf_life_leave(s, how);
	if (found && hold)
		mf_life_map_hold(out->file);
	return found;
}

/* No thread may be in the map when the child is made; but a signal handler's fork that
 * interrupted this thread in the map would wait for itself: then the child only starts over. */
static int mf_life_held;
static uint32_t mf_life_held_files; /* the owners whose locks are held (numbers below it) */

/* Every owner numbered below files locked, marked shared with `mark` added, and (if one was
 * biased) waited for: no thread is in one then. */
static void mf_life_owners_out(uint32_t files, int mark)
{
	int biased = 0;
	for (uint32_t f = 1; f < files; f++) {
		struct mf_life_shard *s = mf_life_owner(f);
		mf_life_lock(s);
		biased |= !s->shared;
		__atomic_store_n(&s->shared, s->shared | mark, __ATOMIC_RELAXED);
	}
	if (!biased || __libc_single_threaded) /* (then no other thread is in one) */
		return;
	mf_life_bias_barrier();
	for (uint32_t f = 1; f < files; f++)
		mf_spin_until_zero(&mf_life_owner(f)->busy, 0);
}

void mf_life_map_prefork(uint32_t files)
{
	if (mf_tls.life_busy)
		return;
	for (int i = 0; i < MF_LIFE_SHARDS; i++)
		mf_life_lock(&mf_life_shards[i]);
	mf_life_owners_out(files, 2);
	mf_life_held_files = files;
	mf_life_held = 1;
}

void mf_life_map_postfork_parent(void)
{
	if (!mf_life_held)
		return;
	mf_life_held = 0;
	for (uint32_t f = 1; f < mf_life_held_files; f++) {
		struct mf_life_shard *s = mf_life_owner(f);
		__atomic_store_n(&s->shared, s->shared & ~2, __ATOMIC_RELAXED);
		mf_life_unlock(s);
	}
	for (int i = 0; i < MF_LIFE_SHARDS; i++)
		mf_life_unlock(&mf_life_shards[i]);
}

void mf_life_map_unbias_all(uint32_t files)
{
	mf_life_owners_out(files, 1); /* (with membarrier, while it may still be asked) */
	mf_life_bias_off();
	for (size_t p = 0; p < MF_LIFE_FILES / MF_LIFE_OWNERS; p++)
		if (mf_life_owners[p])
			mf_life_page_shared(mf_life_owners[p]);
	for (uint32_t f = 1; f < files; f++)
		mf_life_unlock(mf_life_owner(f));
}

/* fn for every table: the shards and every owner made (with owner 1) */
static void mf_life_each(void (*fn)(struct mf_life_shard *, int owner))
{
	for (int i = 0; i < MF_LIFE_SHARDS; i++)
		fn(&mf_life_shards[i], 0);
	for (size_t p = 0; p < MF_LIFE_FILES / MF_LIFE_OWNERS; p++)
		if (mf_life_owners[p])
			for (int i = 0; i < MF_LIFE_OWNERS; i++)
				fn(&mf_life_owners[p][i], 1);
}

static void mf_life_unlock_one(struct mf_life_shard *s, int owner)
{
	(void)owner;
	s->lock = 0;
	s->busy = 0; /* (the interrupted call's, which goes on in the child's copy) */
}

void mf_life_map_unlock_all(void)
{
	mf_life_held = 0;
	mf_life_pages.lock = 0;
	mf_life_each(mf_life_unlock_one);
}

static void mf_life_empty(struct mf_life_shard *s, int owner)
{
	if (s->slot)
		mf_life_table_free(s->slot, s->mask + 1);
	*s = (struct mf_life_shard){.shared = owner && !mf_life_bias};
}

void mf_life_map_postfork_child(void)
{
	mf_life_held = 0;
	mf_life_pages.lock = 0;
	mf_life_each(mf_life_empty);
	if (mf_life_filter) /* (its pages read as zeros again) */
		madvise(mf_life_filter, (size_t)1 << MF_LIFE_FILTER_BITS, MADV_DONTNEED);
	if (mf_life_dir)
		madvise(mf_life_dir, sizeof(uint64_t) << MF_LIFE_DIR_BITS, MADV_DONTNEED);
}
