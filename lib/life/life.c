/* Lifetimes (MALLOC_FREQ_LIFETIMES=1): every live block is in an address map (map.c) with the
 * thread file and leaf that allocated it, so that a free on any thread, also after the
 * allocating thread ended, is charged to that leaf's struct mf_life in its file. Runs inside
 * malloc: no malloc (the map's memory is mmap'd), no stdio, errno preserved. The thread files
 * stay mapped to the end of the process (a late free still finds its record), and never move
 * (their reserved address space is made large; a file that would outgrow it stops growing).
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
 * figure counts those (a reader scales them by N, as the calls), and a free of another block
 * learns that from the map's filter. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "life/internal.h"
#include "thread.h"

/* The thread's change of live bytes not yet in the process's sum (mf_life_change). */
#define MF_LIFE_BATCH (64 << 10)
static int64_t mf_life_batch = MF_LIFE_BATCH; /* (sampled: the bytes that stand for as much) */

static int mf_life_sampled; /* a free the map does not know may be of an unsampled block */

/* Lifetimes are measured with the processor's counter (mf_ticks), a few nanoseconds a read
 * where clock_gettime takes 30 on a virtual machine: its nanoseconds per tick, measured once
 * against CLOCK_MONOTONIC. */
static uint64_t mf_life_ns_per_tick = 1ull << 32; /* (a fraction: times 2^32) */
static uint64_t mf_life_real0, mf_life_tick0;	  /* CLOCK_REALTIME ns and the counter, at start */

static inline uint64_t mf_life_now(void)
{
	/* (seccomp strict mode may disable the counter: 0, a time not known) */
	return mf_unlikely(mf_confined) ? 0 : mf_ticks();
}

/* ticks of the counter in nanoseconds */
static inline uint64_t mf_life_ns(uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * mf_life_ns_per_tick) >> 32);
}

void mf_life_init(void)
{
	uint64_t t0 = mf_clock_ns(CLOCK_MONOTONIC), c0 = mf_life_now(), t1, c1;
	do /* (50 us: enough for a ratio to 0.1%, nothing next to a process's start) */
		t1 = mf_clock_ns(CLOCK_MONOTONIC), c1 = mf_life_now();
	while (t1 - t0 < 50000 && t1 >= t0);
	if (c1 > c0 && t1 > t0)
		mf_life_ns_per_tick =
		    (uint64_t)((double)(t1 - t0) / (double)(c1 - c0) * 4294967296.0);
	mf_life_bias_init();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	mf_life_tick0 = mf_life_now();
	mf_life_real0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (mf_config.sample <= 1)
		return;
	mf_life_sampled = 1;
	mf_life_batch = MF_LIFE_BATCH / (int64_t)mf_config.sample + 1;
	mf_life_map_sampled();
}

int mf_life_on;
/* The files by number ([0]: none), made as threads start: a page of numbers at first, then
 * twice as many each time (an array taken up front took 512 KiB of RLIMIT_AS from every
 * profiled program). A bigger one is a copy; the ones before are kept, for a free may still
 * read a number there, which stays right. mf_life_ncap is stored after the array it counts. */
static struct mf_node **mf_life_files;
static uint32_t mf_life_ncap, mf_life_nfiles = 1;
static int mf_life_files_lock;
/* (apart: live changes at every call; the others at each new maximum) */
static _Alignas(64) uint64_t mf_life_live;
static _Alignas(64) uint64_t mf_life_max;
static uint64_t mf_life_peak_id; /* the maximums so far */
static int mf_life_peak_lock;

/* What a leaf holds of a count: its part `in` less `out` (blocks less frees, bytes less freed
 * bytes), 0 if more were freed than counted in. */
static inline uint64_t mf_life_held(const uint64_t *in, const uint64_t *out)
{
	uint64_t a = __atomic_load_n(in, __ATOMIC_RELAXED),
		 b = __atomic_load_n(out, __ATOMIC_RELAXED);
	return a > b ? a - b : 0;
}

/* Before leaf l's live counts change: what it holds now is what it held at the last maximum,
 * if that came since it last changed (see the peak above). */
static MF_NOINLINE void mf_life_see_peak(struct mf_life *l, uint64_t seen, uint64_t id)
{
	if (!__atomic_compare_exchange_n(&l->peak_seen, &seen, id, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&l->peak_blocks, mf_life_held(&l->blocks, &l->frees), __ATOMIC_RELAXED);
	__atomic_store_n(&l->peak_bytes, mf_life_held(&l->bytes, &l->freed_bytes),
			 __ATOMIC_RELAXED);
}

static inline void mf_life_see(struct mf_life *l)
{
	uint64_t id = __atomic_load_n(&mf_life_peak_id, __ATOMIC_ACQUIRE);
	uint64_t seen = __atomic_load_n(&l->peak_seen, __ATOMIC_RELAXED);
	if (mf_unlikely(seen != id))
		mf_life_see_peak(l, seen, id);
}

/* Whether leaf l's peak fields hold what it holds now: then they are right whichever maximum
 * came last, and l is left as it is. Marked seen instead, every leaf of every file would
 * change at each new maximum, and so would every ended thread's file, which a snapshot then
 * takes whole again (with lifetimes its hash covers the nodes). */
static int mf_life_peak_holds(const struct mf_life *l)
{
	return __atomic_load_n(&l->peak_blocks, __ATOMIC_RELAXED) ==
		   mf_life_held(&l->blocks, &l->frees) &&
	       __atomic_load_n(&l->peak_bytes, __ATOMIC_RELAXED) ==
		   mf_life_held(&l->bytes, &l->freed_bytes);
}

/* The node where the struct mf_life of the first leaf of nodes[*i..n) starts, *i moved past
 * that leaf's records (the slots after leaves and size nodes stepped over, as a reader does);
 * 0 when none is left whole. */
static uint64_t mf_life_next(const struct mf_node *nodes, uint64_t n, uint64_t *i)
{
	while (*i < n) {
		uint64_t at = *i;
		uint32_t module = nodes[at].module;
		*i += 1 + (module == MF_MODULE_ENTRY   ? MF_LEAF_SLOTS + MF_LIFE_SLOTS
			   : module == MF_MODULE_SIZES ? MF_SIZES_SLOTS
						       : 0);
		if (module == MF_MODULE_ENTRY)
			return *i <= n ? at + 1 + MF_LEAF_SLOTS : 0;
	}
	return 0;
}

int mf_life_nodes_final(const struct mf_node *nodes, uint64_t n)
{
	for (uint64_t i = 1, at; (at = mf_life_next(nodes, n, &i));) {
		const struct mf_life *l = (const struct mf_life *)(nodes + at);
		if (l->blocks != l->frees || l->bytes != l->freed_bytes || l->peak_blocks ||
		    l->peak_bytes)
			return 0;
	}
	return 1;
}

/* Every leaf of every file brought up to date (mf_life_see), and the blocks live at the peak
 * into the process record: at exit and before a snapshot, once. A leaf whose peak fields
 * already hold its live counts keeps its peak_seen: one that is not the last maximum's tells a
 * reader the same thing (what it holds now), and no count changes after this that
 * mf_life_see would not see first. */
void mf_life_settle(void)
{
	uint32_t files = __atomic_load_n(&mf_life_nfiles, __ATOMIC_RELAXED);
	uint32_t cap = __atomic_load_n(&mf_life_ncap, __ATOMIC_ACQUIRE);
	struct mf_node **all = __atomic_load_n(&mf_life_files, __ATOMIC_ACQUIRE);
	uint64_t live_blocks = 0;
	for (uint32_t id = 1; id < files && id < cap; id++) {
		struct mf_node *nodes = __atomic_load_n(&all[id], __ATOMIC_ACQUIRE);
		if (!nodes)
			continue;
		const struct mf_prof_header *h =
		    (const struct mf_prof_header *)((char *)nodes - MF_HEADER_SIZE);
		uint64_t n = __atomic_load_n(&h->node_count, __ATOMIC_ACQUIRE), at;
		for (uint64_t i = 1; (at = mf_life_next(nodes, n, &i));) {
			struct mf_life *l = (struct mf_life *)(nodes + at);
			if (!mf_life_peak_holds(l))
				mf_life_see(l);
			live_blocks += __atomic_load_n(&l->peak_blocks, __ATOMIC_RELAXED);
		}
	}
	if (__atomic_load_n(&mf_wiped.epoch, __ATOMIC_RELAXED))
		mf_process_set(MF_PROCESS_PEAK_BLOCKS, live_blocks);
}

/* The thread's change of live bytes not yet in the process's sum (see the peak above). */
static MF_TLS int64_t mf_life_delta;

uint64_t mf_life_live_now(void)
{
	return __atomic_load_n(&mf_life_live, __ATOMIC_RELAXED) + (uint64_t)mf_life_delta;
}

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

/* The live bytes rose to live (at tick now), a new maximum, while the process has one thread:
 * numbered, and l (if not NULL) as it is now. */
static MF_NOINLINE void mf_life_top(uint64_t live, struct mf_life *l, uint64_t now)
{
	__atomic_store_n(&mf_life_max, live, __ATOMIC_RELAXED);
	mf_life_peak_new(live, now);
	if (l)
		mf_life_see(l);
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
		mf_life_top(live, NULL, now);
		return 1;
	}
	while (live > max)
		if (__atomic_compare_exchange_n(&mf_life_max, &max, live, 1, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			mf_spin_take(&mf_life_peak_lock);
			/* (a greater one set meanwhile is its thread's to number) */
			if (__atomic_load_n(&mf_life_max, __ATOMIC_RELAXED) == live)
				mf_life_peak_new(live, now);
			mf_spin_give(&mf_life_peak_lock);
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
	if (__libc_single_threaded) { /* (mf_life_grew's, inline: most calls of most programs) */
		mf_life_delta = 0;
		uint64_t live = __atomic_load_n(&mf_life_live, __ATOMIC_RELAXED) + (uint64_t)d;
		__atomic_store_n(&mf_life_live, live, __ATOMIC_RELAXED);
		if (d > 0 && live > __atomic_load_n(&mf_life_max, __ATOMIC_RELAXED))
			mf_life_top(live, l, now);
	} else if ((uint64_t)(d + mf_life_batch - 1) < (uint64_t)(2 * mf_life_batch - 1)) {
		mf_life_delta = d; /* (-mf_life_batch < d < mf_life_batch) */
	} else {
		mf_life_flush(d, l, now);
	}
}

void mf_life_thread_exit(void)
{
	mf_life_flush(mf_life_delta, NULL, mf_life_now());
	mf_life_map_owner_gone(mf_tls.life_file);
}

void mf_life_exit(void)
{
	mf_life_thread_exit();
	mf_life_settle();
}

/* Room for number id in mf_life_files (under its lock): 0, or -1 without memory. */
static int mf_life_files_room(uint32_t id)
{
	if (id < mf_life_ncap)
		return 0;
	uint32_t cap = mf_life_ncap ? mf_life_ncap * 2 : MF_PAGE_SIZE / sizeof(*mf_life_files);
	struct mf_node **all = mmap(NULL, cap * sizeof(*all), PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (all == MAP_FAILED)
		return -1;
	if (mf_life_ncap)
		memcpy(all, mf_life_files, mf_life_ncap * sizeof(*all));
	__atomic_store_n(&mf_life_files, all, __ATOMIC_RELEASE);
	__atomic_store_n(&mf_life_ncap, cap, __ATOMIC_RELEASE);
	return 0;
}

uint32_t mf_life_file_new(struct mf_node *nodes)
{
	int saved = errno;
	mf_spin_take(&mf_life_files_lock);
	uint32_t id = mf_life_nfiles;
	int room = id < MF_LIFE_FILES && mf_life_files_room(id) == 0 && mf_life_map_file(id) == 0;
	if (room) {
		__atomic_store_n(&mf_life_files[id], nodes, __ATOMIC_RELEASE);
		__atomic_store_n(&mf_life_nfiles, id + 1, __ATOMIC_RELEASE);
	}
	mf_spin_give(&mf_life_files_lock);
	errno = saved;
	if (!room)
		MF_LOG_ONCE("no number for thread file %u of lifetimes (at most %d, as memory "
			    "allows): the blocks of this thread and later ones are not tracked "
			    "(their frees count as frees of unknown blocks)",
			    id, MF_LIFE_FILES - 1);
	return room ? id : 0;
}

/* A block of leaf node of file, freed at now (0: found replaced, freed where we did not see
 * it, when is not known): its leaf's record (NULL: none). Under the lock of the file's owner
 * (mf_life_map_hold), so that its counts take plain adds: any thread may free the leaf's
 * blocks, but none at the same time as another. */
static MF_INLINE struct mf_life *mf_life_freed(const struct mf_life_slot *slot, uint64_t now)
{
	struct mf_node *nodes = __atomic_load_n(
	    &__atomic_load_n(&mf_life_files, __ATOMIC_ACQUIRE)[slot->file], __ATOMIC_ACQUIRE);
	if (!nodes)
		return NULL;
	struct mf_life *l = (struct mf_life *)(nodes + slot->node + 1 + MF_LEAF_SLOTS);
	mf_life_see(l);
	unsigned b = MF_LIFETIME_BUCKETS;
	uint64_t ns = 0;
	if (now) {
		ns = mf_life_ns(now > slot->born ? now - slot->born : 0);
		b = MF_SIZE_BUCKET(ns);
		b = b < MF_LIFETIME_BUCKETS ? b : MF_LIFETIME_BUCKETS - 1;
	}
	/* (stores a word at a time: other threads read them; frees after the bytes, which the
	 * allocating thread reads after the blocks; the sum before its bucket: a reader sees no
	 * sum below the buckets') */
	__atomic_store_n(&l->freed_bytes, l->freed_bytes + slot->size, __ATOMIC_RELAXED);
	__atomic_store_n(&l->frees, l->frees + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->lifetime_ns, l->lifetime_ns + ns, __ATOMIC_RELAXED);
	if (b < MF_LIFETIME_BUCKETS)
		__atomic_store_n(&l->lifetime[b], l->lifetime[b] + 1, __ATOMIC_RELAXED);
	return l;
}

/* The parent's files and sums are not the child's: forgotten (files numbered from first on
 * are the child's own). */
static void mf_life_forget(uint32_t first)
{
	mf_life_map_postfork_child();
	if (mf_life_files)
		memset(mf_life_files, 0,
		       sizeof(mf_life_files[0]) * (first < mf_life_ncap ? first : mf_life_ncap));
	mf_life_files_lock = 0;
	if (mf_life_nfiles == first)
		mf_life_nfiles = 1;
	mf_life_live = mf_life_max = mf_life_peak_id = 0;
	mf_life_delta = 0; /* (the forking thread's batch was of the parent's sum) */
	mf_life_peak_lock = 0;
}

/* A child forked by a signal handler that interrupted this thread in the map: the parent's
 * files were numbered below this (0: none such). The interrupted call goes on in the child
 * when the handler returns, in the child's copy of the map, and the parent is forgotten as
 * it leaves. Until then the child's thread is busy: none of its blocks is tracked, none of
 * its frees counted. */
static uint32_t mf_life_forked;

/* (there) The parent's files are shared mappings, and the interrupted call may count in
 * one of them: each is replaced by private zeroed memory, as the child's copy of the map
 * is private. */
static void mf_life_files_private(void)
{
	for (uint32_t id = 1; id < mf_life_nfiles && id < mf_life_ncap; id++) {
		struct mf_node *nodes = mf_life_files[id];
		if (!nodes)
			continue;
		char *header = (char *)nodes - MF_HEADER_SIZE;
		size_t n = ((const struct mf_prof_header *)header)->node_count;
		size_t size = mf_pages_round(MF_HEADER_SIZE + n * sizeof(*nodes));
		mmap(header, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	}
}

/* Frees that a signal handler made while its thread was in the map, which it cannot enter
 * then: each address with when it was freed (the counter, read in order), taken out of the
 * map as the thread leaves it (mf_life_after). The real free is not held back: a block that
 * another thread is given the address of meanwhile, and puts in the map, is younger than the
 * free, and stays (its put found the freed block there, and charged it, freed at a time not
 * known). More than MF_LIFE_LATE at once are not counted. */
#define MF_LIFE_LATE 8
static MF_TLS struct {
	uintptr_t addr;
	uint64_t at;
} mf_life_late[MF_LIFE_LATE];
static MF_TLS unsigned mf_life_nlate;

static MF_NOINLINE void mf_life_later(void *p)
{
	/* (one instruction: a handler that interrupts this one takes the next entry) */
	unsigned n = __atomic_fetch_add(&mf_life_nlate, 1, __ATOMIC_RELAXED);
	if (n >= MF_LIFE_LATE) {
		__atomic_fetch_sub(&mf_life_nlate, 1, __ATOMIC_RELAXED);
		return;
	}
	mf_ticks_fence(); /* (the counter read after what came before, before the free) */
	mf_life_late[n].at = mf_life_now();
	mf_ticks_fence();
	mf_life_late[n].addr = (uintptr_t)p;
}

static MF_INLINE void mf_life_charge(const struct mf_life_slot *slot, uint64_t replaced_by,
				     uint64_t now);

/* The thread has left the map: a child forked meanwhile forgets its parent, and the frees
 * its handlers left for later are taken out (with no entry taken while the thread is in the
 * map, where a handler adds them). */
static MF_NOINLINE void mf_life_after(void)
{
	for (;;) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (mf_life_forked) {
			uint32_t first = mf_life_forked;
			mf_life_forked = 0;
			mf_life_nlate = 0; /* (of the parent's map) */
			mf_life_forget(first);
		}
		unsigned n = mf_life_nlate;
		if (!n)
			return;
		uintptr_t addr = mf_life_late[n - 1].addr;
		uint64_t at = mf_life_late[n - 1].at;
		mf_life_nlate = n - 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		mf_tls.life_busy++;
		struct mf_life_slot slot;
		if (mf_life_map_take(addr, at, &slot, 1)) {
			mf_life_charge(&slot, 0, at);
			mf_life_map_release(slot.file);
		}
		mf_tls.life_busy--;
	}
}

/* The thread leaves the map. */
static inline void mf_life_leave(void)
{
	if (--mf_tls.life_busy)
		return;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* (both set by signal handlers in this thread) */
	if (mf_unlikely(mf_life_nlate | mf_life_forked))
		mf_life_after();
}

/* The block at addr was freed where we did not see it, and its address was given out again:
 * what the map held of it, freed at an unknown time. */
static MF_NOINLINE void mf_life_stale(const struct mf_life_slot *stale)
{
	mf_life_map_hold(stale->file);
	mf_life_freed(stale, 0);
	mf_life_map_release(stale->file);
	mf_life_delta -= (int64_t)stale->size;
}

#define MF_LIFE_NOW UINT64_MAX /* (a time to read) */

/* Block p of n bytes into the map, for the thread's last leaf record, made at tick born. */
static MF_NOINLINE void mf_life_track(void *p, size_t n, uint64_t born)
{
	struct mf_leaf *rec = mf_tls.last_record;
	uint32_t file = mf_tls.life_file;
	if (!p || !rec || !file || mf_tls.life_busy || mf_tls.recording)
		return;
	mf_tls.life_busy++;
	if (born == MF_LIFE_NOW)
		born = mf_life_now(); /* (outside the table: it takes a while) */
	struct mf_node *leaf = (struct mf_node *)rec - 1;
	struct mf_life *l = (struct mf_life *)(leaf + 1 + MF_LEAF_SLOTS);
	const struct mf_life_slot x = {(uintptr_t)p, n, file, (uint32_t)(leaf - mf_tls.nodes),
				       born};
	struct mf_life_slot stale;
	int put = mf_life_map_put(&x, &stale);
	if (mf_unlikely(stale.addr))
		mf_life_stale(&stale);
	if (put) {
		/* (written by this thread only; others read them, a word at a time) */
		mf_life_see(l);
		uint64_t bytes = l->bytes += n;
		uint64_t blocks = ++l->blocks;
		/* (frees are counted after blocks, by any thread: one read across a free may
		 * find more freed than allocated, a live count below zero, never taken) */
		int64_t live =
		    (int64_t)(bytes - __atomic_load_n(&l->freed_bytes, __ATOMIC_RELAXED));
		if (live > (int64_t)l->max_bytes)
			l->max_bytes = (uint64_t)live;
		live = (int64_t)(blocks - __atomic_load_n(&l->frees, __ATOMIC_RELAXED));
		if (live > (int64_t)l->max_blocks)
			l->max_blocks = (uint64_t)live;
		mf_life_change((int64_t)n, l, born);
	}
	mf_life_leave();
}

/* (apart from mf_life_track: under sampling, most calls end here, and need no frame) */
void mf_life_alloc(void *p, size_t n)
{
	if (mf_tls.last_record != &mf_leaf_none)
		mf_life_track(p, n, MF_LIFE_NOW);
}

/* Whether a free of p may go into the map now: not the profiler's own, nor the parent's map
 * in a child made without fork()'s handlers (until it is reset); a signal handler's while its
 * thread is in the map is left for later (later: a free, not a realloc that may fail). */
static inline int mf_life_may_take(void *p, int later)
{
	if (mf_tls.own || !__atomic_load_n(&mf_wiped.epoch, __ATOMIC_RELAXED))
		return 0; /* (signals are blocked while the profiler's own calls run) */
	if (mf_unlikely(mf_tls.life_busy)) {
		if (later)
			mf_life_later(p);
		return 0;
	}
	return 1;
}

/* A block out of the map was freed at tick now, or (realloc) replaced by one of replaced_by
 * bytes: charged to its leaf. In the map (life_busy). */
static MF_INLINE void mf_life_charge(const struct mf_life_slot *slot, uint64_t replaced_by,
				     uint64_t now)
{
	struct mf_life *l = mf_life_freed(slot, now);
	if (slot->size > replaced_by)
		mf_life_change(-(int64_t)slot->size, l, now);
	else /* (a growing realloc: its new block's bytes come in mf_life_alloc, at once) */
		mf_life_delta -= (int64_t)slot->size;
}

/* A free of a block the map does not have. */
static void mf_life_unknown(void)
{
	/* (while recording is off, or in seccomp strict mode, blocks are not seen allocated: not
	 * counted then) */
	if (!mf_life_sampled && !mf_control_off() && !mf_confined)
		mf_process_count(MF_PROCESS_UNKNOWN_FREES, 1);
}

void mf_life_free(void *p)
{
	if (!mf_life_may_take(p, 1))
		return;
	mf_tls.life_busy++;
	uint64_t now = mf_life_now(); /* (outside the lock: it takes a while) */
	struct mf_life_slot slot;
	if (mf_life_map_take((uintptr_t)p, UINT64_MAX, &slot, 1)) {
		mf_life_charge(&slot, 0, now);
		mf_life_map_release(slot.file);
	} else
		mf_life_unknown();
	mf_life_leave();
}

int mf_life_realloc_take(void *old, struct mf_life_slot *held)
{
	if (!mf_life_maybe(old) || !mf_life_may_take(old, 0))
		return -1;
	mf_tls.life_busy++;
	int found = mf_life_map_take((uintptr_t)old, UINT64_MAX, held, 0);
	mf_life_leave();
	return found;
}

void mf_life_realloc_done(int taken, const struct mf_life_slot *held, void *p, size_t n)
{
	if (!p && n) { /* (failed: the old block lives on, where it was) */
		struct mf_life_slot stale;
		if (taken == 1 && !mf_tls.life_busy) {
			mf_tls.life_busy++;
			mf_life_map_put(held, &stale);
			mf_life_leave();
		}
		return;
	}
	uint64_t now = MF_LIFE_NOW;
	if (taken == 1 && !mf_tls.life_busy) {
		mf_tls.life_busy++;
		now = mf_life_now(); /* (the old block's end, the new one's start: one read) */
		mf_life_map_hold(held->file);
		mf_life_charge(held, p ? n : 0, now);
		mf_life_map_release(held->file);
		mf_life_leave();
	} else if (taken == 0) {
		mf_life_unknown();
	}
	if (mf_tls.last_record != &mf_leaf_none)
		mf_life_track(p, n, now);
}

void mf_life_confine(void)
{
	/* (a file numbered meanwhile would be biased) From a signal handler that interrupted its
	 * thread in the map or numbering a file, whose locks or table it would wait for: no
	 * membarrier from now on, and the tables biased stay so until they are needed. */
	if (mf_tls.life_busy || __atomic_exchange_n(&mf_life_files_lock, 1, __ATOMIC_ACQUIRE)) {
		mf_life_bias_off();
		return;
	}
	mf_life_map_unbias_all(mf_life_nfiles);
	mf_spin_give(&mf_life_files_lock);
}

void mf_life_prefork(void)
{
	mf_life_map_prefork(mf_life_nfiles);
}

void mf_life_postfork_parent(void)
{
	mf_life_map_postfork_parent();
}

void mf_life_postfork_child(void)
{
	mf_tls.life_file = 0;
	mf_life_nlate = 0; /* (of the parent's map) */
	if (mf_tls.life_busy) {
		mf_life_map_unlock_all();
		mf_life_files_private();
		mf_life_forked = mf_life_nfiles;
		return;
	}
	mf_life_forget(mf_life_nfiles);
}
