/* Lifetimes (MALLOC_FREQ_LIFETIMES=1): an address map from every live block to the thread file
 * and leaf that allocated it, so that a free on any thread, also after the allocating thread
 * ended, is charged to that leaf's struct mf_life in its file. Runs inside malloc: no malloc
 * (the map's memory is mmap'd), no stdio, errno preserved.
 *
 * The map: 64 shards by address hash, each an open-addressing table (linear probing,
 * deletion by backward shift: no tombstones) behind a spinlock of its own, so threads that
 * allocate at once rarely meet (and while the process has one thread, none is taken); a
 * shard doubles at half full. A slot is 32 bytes, so a live
 * block costs 64 to 128 bytes. The thread files stay mapped to the end of the process (a
 * late free still finds its record), and never move (their reserved address space is made
 * large; a file that would outgrow it stops growing).
 *
 * The peak (DHAT's t-gmax), without a walk: the process's live requested bytes are one atomic
 * sum, and each new maximum of it gets a number (mf_life_peak_id). A leaf's live counts change
 * only after mf_life_see: if a maximum came since the leaf last changed, what the leaf holds
 * now is what it held then, and goes into its peak fields with that number (peak_seen). A leaf
 * whose peak_seen is not the last number held at the peak what it holds now: at exit and
 * before a snapshot every leaf is brought up to date so (mf_life_settle); a reader does it for
 * a killed process's files. Exact while the process has one thread (each change goes into the
 * sum at once); with more, each thread's changes go in by batches of MF_LIFE_BATCH bytes (one
 * atomic on a line all threads share per so many bytes, not per call), so the moment found is
 * right to within that much per thread, and what each leaf held then is its own count.
 *
 * Under sampling (MALLOC_FREQ_SAMPLE=N) only the sampled calls' blocks enter the map: every
 * figure counts those (a reader scales them by N, as the calls), and a free learns from the
 * filter (mf_life_maybe: a hash and a byte read) that its block is not one of them. The heap
 * is the host's, so a block cannot carry a mark of its own; the filter is 1 MiB of counts,
 * each changed only under the lock of the shard its hashes fall in. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <time.h>

#include "mf_internal.h"

#define MF_LIFE_SHARDS	  64
#define MF_LIFE_FILES	  65536
#define MF_LIFE_SLOTS_MIN 512

/* The thread's change of live bytes not yet in the process's sum (mf_life_change). */
#define MF_LIFE_BATCH (64 << 10)
static int64_t mf_life_batch = MF_LIFE_BATCH; /* (sampled: the bytes that stand for as much) */

uint8_t *mf_life_filter;
static int mf_life_sampled; /* a free the map does not know may be of an unsampled block */

struct mf_life_slot {
	uintptr_t addr; /* 0: empty */
	uint64_t size;
	uint32_t file, node; /* the leaf: mf_life_files[file][node] */
	uint64_t born;	     /* the time-stamp counter */
};

/* Lifetimes are measured with the time-stamp counter (invariant on every x86-64 that Linux
 * keeps it as its clock source), a few nanoseconds a read where clock_gettime takes 30 on a
 * virtual machine: its nanoseconds per tick, measured once against CLOCK_MONOTONIC. */
static double mf_life_ns_per_tick = 1.0;
static uint64_t mf_life_real0, mf_life_tick0; /* CLOCK_REALTIME ns and the counter, at start */

static inline uint64_t mf_life_now(void)
{
	return __builtin_ia32_rdtsc();
}

/* ticks of the counter in nanoseconds */
static inline uint64_t mf_life_ns(uint64_t ticks)
{
	return (uint64_t)((double)ticks * mf_life_ns_per_tick);
}

static uint64_t mf_life_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mf_life_init(void)
{
	uint64_t t0 = mf_life_mono(), c0 = mf_life_now(), t1, c1;
	do /* (50 us: enough for a ratio to 0.1%, nothing next to a process's start) */
		t1 = mf_life_mono(), c1 = mf_life_now();
	while (t1 - t0 < 50000 && t1 >= t0);
	if (c1 > c0 && t1 > t0)
		mf_life_ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	mf_life_tick0 = mf_life_now();
	mf_life_real0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (mf_config.sample <= 1)
		return;
	mf_life_sampled = 1;
	mf_life_batch = MF_LIFE_BATCH / (int64_t)mf_config.sample + 1;
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

int mf_life_on;
static struct mf_life_shard mf_life_shards[MF_LIFE_SHARDS];
static struct mf_node *mf_life_files[MF_LIFE_FILES]; /* [0]: none */
static uint32_t mf_life_nfiles = 1;
/* (apart: live changes at every call; the others at each new maximum) */
static _Alignas(64) uint64_t mf_life_live;
static _Alignas(64) uint64_t mf_life_max;
static uint64_t mf_life_peak_id; /* the maximums so far */
static int mf_life_peak_lock;

/* Before leaf l's live counts change: what it holds now is what it held at the last maximum,
 * if that came since it last changed (see the peak above). */
static MF_NOINLINE void mf_life_see_peak(struct mf_life *l, uint64_t seen, uint64_t id)
{
	if (!__atomic_compare_exchange_n(&l->peak_seen, &seen, id, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	uint64_t blocks = __atomic_load_n(&l->blocks, __ATOMIC_RELAXED);
	uint64_t frees = __atomic_load_n(&l->frees, __ATOMIC_RELAXED);
	uint64_t bytes = __atomic_load_n(&l->bytes, __ATOMIC_RELAXED);
	uint64_t freed = __atomic_load_n(&l->freed_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&l->peak_blocks, blocks > frees ? blocks - frees : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&l->peak_bytes, bytes > freed ? bytes - freed : 0, __ATOMIC_RELAXED);
}

static inline void mf_life_see(struct mf_life *l)
{
	uint64_t id = __atomic_load_n(&mf_life_peak_id, __ATOMIC_ACQUIRE);
	uint64_t seen = __atomic_load_n(&l->peak_seen, __ATOMIC_RELAXED);
	if (mf_unlikely(seen != id))
		mf_life_see_peak(l, seen, id);
}

/* Every leaf of every file brought up to date (mf_life_see), and the blocks live at the peak
 * into the process record: at exit and before a snapshot, once. */
void mf_life_settle(void)
{
	uint32_t files = __atomic_load_n(&mf_life_nfiles, __ATOMIC_RELAXED);
	uint64_t live_blocks = 0;
	for (uint32_t id = 1; id < files && id < MF_LIFE_FILES; id++) {
		struct mf_node *nodes = __atomic_load_n(&mf_life_files[id], __ATOMIC_ACQUIRE);
		if (!nodes)
			continue;
		const struct mf_prof_header *h =
		    (const struct mf_prof_header *)((char *)nodes - MF_HEADER_SIZE);
		uint64_t n = __atomic_load_n(&h->node_count, __ATOMIC_ACQUIRE), after;
		for (uint64_t i = 1; i < n; i += 1 + after) {
			uint32_t module = nodes[i].module;
			after = module == MF_MODULE_ENTRY   ? MF_LEAF_SLOTS + MF_LIFE_SLOTS
				: module == MF_MODULE_SIZES ? MF_SIZES_SLOTS
							    : 0;
			if (module != MF_MODULE_ENTRY)
				continue;
			struct mf_life *l = (struct mf_life *)(nodes + i + 1 + MF_LEAF_SLOTS);
			mf_life_see(l);
			live_blocks += __atomic_load_n(&l->peak_blocks, __ATOMIC_RELAXED);
		}
	}
	if (__atomic_load_n(&mf_wiped.epoch, __ATOMIC_RELAXED))
		mf_process_set(MF_PROCESS_PEAK_BLOCKS, live_blocks);
}

/* The thread's change of live bytes not yet in the process's sum (see the peak above). */
static MF_TLS int64_t mf_life_delta;

/* The process's live bytes plus d (modulo 2^64): a locked add, or while the process has one
 * thread a plain one (no other thread reads it until one is created, which orders it). */
static inline uint64_t mf_life_live_add(uint64_t d)
{
	if (__libc_single_threaded) {
		uint64_t live = __atomic_load_n(&mf_life_live, __ATOMIC_RELAXED) + d;
		__atomic_store_n(&mf_life_live, live, __ATOMIC_RELAXED);
		return live;
	}
	return __atomic_add_fetch(&mf_life_live, d, __ATOMIC_RELAXED);
}

/* The process's live bytes reached live, a new maximum (at tick now): numbered, and the
 * process record says it (not in a child made without fork()'s handlers: the record is its
 * parent's). With mf_life_peak_lock held, or while the process has one thread. */
static void mf_life_peak_new(uint64_t live, uint64_t now)
{
	uint64_t id = __atomic_load_n(&mf_life_peak_id, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&mf_life_peak_id, id, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&mf_wiped.epoch, __ATOMIC_RELAXED))
		return;
	uint64_t ns = mf_life_real0 + mf_life_ns(now - mf_life_tick0);
	mf_process_set(MF_PROCESS_PEAK_BYTES, live);
	mf_process_set(MF_PROCESS_PEAK_NS, ns);
	mf_process_set(MF_PROCESS_PEAK_ID, id);
}

/* Live bytes up by d (> 0) at tick now: whether that made a new maximum. While the process has
 * one thread, with plain loads and stores (nothing else reads them then). */
static int mf_life_grew(int64_t d, uint64_t now)
{
	uint64_t live = mf_life_live_add((uint64_t)d);
	uint64_t max = __atomic_load_n(&mf_life_max, __ATOMIC_RELAXED);
	if (mf_likely(live <= max))
		return 0;
	if (__libc_single_threaded) {
		__atomic_store_n(&mf_life_max, live, __ATOMIC_RELAXED);
		mf_life_peak_new(live, now);
		return 1;
	}
	while (live > max)
		if (__atomic_compare_exchange_n(&mf_life_max, &max, live, 1, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			while (__atomic_exchange_n(&mf_life_peak_lock, 1, __ATOMIC_ACQUIRE))
				sched_yield();
			/* (a greater one set meanwhile is its thread's to number) */
			if (__atomic_load_n(&mf_life_max, __ATOMIC_RELAXED) == live)
				mf_life_peak_new(live, now);
			__atomic_store_n(&mf_life_peak_lock, 0, __ATOMIC_RELEASE);
			return 1;
		}
	return 0;
}

/* Leaf l's live bytes changed by d (at tick now): into the process's sum at once while the
 * process has one thread, else once the thread's changes come to a batch either way. A new
 * maximum made by this change finds l as it is now. */
static MF_NOINLINE void mf_life_flush(int64_t d, struct mf_life *l, uint64_t now)
{
	mf_life_delta = 0;
	if (d > 0) {
		if (mf_life_grew(d, now) && l)
			mf_life_see(l);
	} else if (d < 0) {
		mf_life_live_add((uint64_t)d);
	}
}

static inline void mf_life_change(int64_t d, struct mf_life *l, uint64_t now)
{
	d += mf_life_delta;
	if (mf_likely(!__libc_single_threaded) && d < mf_life_batch && d > -mf_life_batch)
		mf_life_delta = d;
	else
		mf_life_flush(d, l, now);
}

void mf_life_thread_exit(void)
{
	mf_life_flush(mf_life_delta, NULL, mf_life_now());
}

void mf_life_exit(void)
{
	mf_life_thread_exit();
	mf_life_settle();
}

uint32_t mf_life_file_new(struct mf_node *nodes)
{
	uint32_t id = __atomic_fetch_add(&mf_life_nfiles, 1, __ATOMIC_RELAXED);
	if (id >= MF_LIFE_FILES) {
		MF_LOG_ONCE("more than %d threads: the blocks of the later ones are not tracked "
			    "(their frees count as frees of unknown blocks)",
			    MF_LIFE_FILES - 1);
		return 0;
	}
	__atomic_store_n(&mf_life_files[id], nodes, __ATOMIC_RELEASE);
	return id;
}

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
	while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED))
			sched_yield();
}

static void mf_life_unlock(struct mf_life_shard *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
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

/* A block of leaf node of file, freed at now (0: found replaced, freed where we did not see
 * it, when is not known): its leaf's record (NULL: none). */
static inline struct mf_life *mf_life_freed(const struct mf_life_slot *slot, uint64_t now)
{
	struct mf_node *nodes = __atomic_load_n(&mf_life_files[slot->file], __ATOMIC_ACQUIRE);
	if (!nodes)
		return NULL;
	struct mf_life *l = (struct mf_life *)(nodes + slot->node + 1 + MF_LEAF_SLOTS);
	mf_life_see(l);
	unsigned b = MF_LIFETIME_BUCKETS;
	if (now) {
		b = MF_SIZE_BUCKET(mf_life_ns(now > slot->born ? now - slot->born : 0));
		b = b < MF_LIFETIME_BUCKETS ? b : MF_LIFETIME_BUCKETS - 1;
	}
	if (slot->file == mf_tls.life_file) { /* (freed by its own thread: no other writes) */
		l->frees++;
		l->freed_bytes += slot->size;
		if (b < MF_LIFETIME_BUCKETS)
			l->lifetime[b]++;
		return l;
	}
	__atomic_add_fetch(&l->frees, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&l->freed_bytes, slot->size, __ATOMIC_RELAXED);
	if (b < MF_LIFETIME_BUCKETS)
		__atomic_add_fetch(&l->lifetime[b], 1, __ATOMIC_RELAXED);
	return l;
}

/* The block at addr was freed where we did not see it, and its address was given out again:
 * what the map held of it, freed at an unknown time. */
static MF_NOINLINE void mf_life_stale(const struct mf_life_slot *stale)
{
	mf_life_freed(stale, 0);
	mf_life_delta -= (int64_t)stale->size;
}

/* Block p of n bytes into the map, for the thread's last leaf record. */
static MF_NOINLINE void mf_life_track(void *p, size_t n)
{
	struct mf_leaf *x = mf_tls.last_record;
	uint32_t file = mf_tls.life_file;
	if (!p || !x || !file || mf_tls.life_busy || mf_tls.recording)
		return;
	mf_tls.life_busy++;
	uint64_t born = mf_life_now(); /* (outside the lock: it takes a while) */
	struct mf_node *leaf = (struct mf_node *)x - 1;
	struct mf_life *l = (struct mf_life *)(leaf + 1 + MF_LEAF_SLOTS);
	uintptr_t addr = (uintptr_t)p;
	uint64_t h = mf_life_hash(addr);
	struct mf_life_shard *s = mf_life_shard(h);
	struct mf_life_slot stale = {0};
	int locked = mf_life_enter(s), put = 0;
	if ((s->slot && 2 * (s->used + 1) <= s->mask + 1) || mf_life_grow(s) == 0) {
		uint64_t i = h & s->mask;
		struct mf_life_slot *y;
		while ((y = &s->slot[i])->addr && y->addr != addr)
			i = (i + 1) & s->mask;
		if (mf_unlikely(y->addr)) { /* (see mf_life_stale) */
			stale = mf_life_slot_read(y);
		} else {
			s->used++;
			mf_life_filter_add(h, 1);
		}
		y->size = n;
		y->file = file;
		y->node = (uint32_t)(leaf - mf_tls.nodes);
		y->born = born;
		y->addr = addr;
		put = 1;
	}
	mf_life_leave(s, locked);
	if (mf_unlikely(stale.addr))
		mf_life_stale(&stale);
	if (put) {
		/* (written by this thread only; others read them, a word at a time) */
		mf_life_see(l);
		uint64_t bytes = l->bytes += n;
		l->blocks++;
		uint64_t live = bytes - __atomic_load_n(&l->freed_bytes, __ATOMIC_RELAXED);
		if (live > l->max_bytes && live <= bytes)
			l->max_bytes = live;
		mf_life_change((int64_t)n, l, born);
	}
	mf_tls.life_busy--;
}

/* (apart from mf_life_track: under sampling, most calls end here, and need no frame) */
void mf_life_alloc(void *p, size_t n)
{
	if (mf_tls.last_record != &mf_leaf_none)
		mf_life_track(p, n);
}

/* Block p leaves the map: freed, or (realloc) replaced by one of replaced_by bytes. */
static void mf_life_drop(void *p, uint64_t replaced_by)
{
	if (mf_tls.life_busy || mf_tls.recording)
		return; /* (a signal handler's, in the map; or the profiler's own) */
	/* A child made without fork()'s handlers: the map is the parent's until it is reset. */
	if (!__atomic_load_n(&mf_wiped.epoch, __ATOMIC_RELAXED))
		return;
	mf_tls.life_busy++;
	uint64_t now = mf_life_now(); /* (outside the lock: it takes a while) */
	uintptr_t addr = (uintptr_t)p;
	uint64_t h = mf_life_hash(addr);
	struct mf_life_shard *s = mf_life_shard(h);
	struct mf_life_slot slot;
	int locked = mf_life_enter(s);
	int found = mf_life_take(s, addr, h, &slot) == 0;
	mf_life_leave(s, locked);
	if (found) {
		struct mf_life *l = mf_life_freed(&slot, now);
		if (slot.size > replaced_by)
			mf_life_change(-(int64_t)slot.size, l, now);
		else /* (a growing realloc: its new block's bytes come in mf_life_alloc, at once) */
			mf_life_delta -= (int64_t)slot.size;
	} else if (!mf_life_sampled && !mf_control_off()) {
		/* (while recording is off, blocks are not seen allocated: not counted then) */
		mf_process_count(MF_PROCESS_UNKNOWN_FREES, 1);
	}
	mf_tls.life_busy--;
}

void mf_life_free(void *p)
{
	mf_life_drop(p, 0);
}

void mf_life_realloc(void *old, void *p, size_t n)
{
	if (old && mf_life_maybe(old))
		mf_life_drop(old, p ? n : 0);
	mf_life_alloc(p, n);
}

/* No thread may be in the map when the child is made; but a signal handler's fork that
 * interrupted this thread in the map would wait for itself: then the child only starts over. */
static int mf_life_held;

void mf_life_prefork(void)
{
	if (mf_tls.life_busy)
		return;
	for (int i = 0; i < MF_LIFE_SHARDS; i++)
		mf_life_lock(&mf_life_shards[i]);
	mf_life_held = 1;
}

void mf_life_postfork_parent(void)
{
	if (!mf_life_held)
		return;
	mf_life_held = 0;
	for (int i = 0; i < MF_LIFE_SHARDS; i++)
		mf_life_unlock(&mf_life_shards[i]);
}

void mf_life_postfork_child(void)
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
	memset(mf_life_files, 0,
	       sizeof(mf_life_files[0]) *
		   (mf_life_nfiles < MF_LIFE_FILES ? mf_life_nfiles : MF_LIFE_FILES));
	mf_life_nfiles = 1;
	mf_life_live = mf_life_max = mf_life_peak_id = 0;
	mf_life_delta = 0; /* (the forking thread's batch was of the parent's sum) */
	mf_life_peak_lock = 0;
	mf_tls.life_file = 0;
	mf_tls.life_busy = 0;
}
