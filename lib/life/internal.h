/* The parts of lifetimes (MALLOC_FREQ_LIFETIMES=1) and how they call each other (lib/life/
 * only):
 *   life.c  the entry points: each block's leaf counts, the clock, the live sum and the peak
 *   map.c   the address map from each live block to its leaf, and its filter under sampling
 * Everything here runs inside malloc: no malloc, no stdio, errno preserved. */
#ifndef MF_LIFE_INTERNAL_H
#define MF_LIFE_INTERNAL_H

#include <stdint.h>

#include "mf_internal.h"

/* A live block: where it is, what it requested, the leaf that allocated it, when. */
struct mf_life_slot {
	uintptr_t addr; /* 0: empty */
	uint64_t size;
	uint32_t file, node; /* the leaf: node node of the nodes of file number file */
	uint64_t born;	     /* the time-stamp counter */
};

/* A spinlock of lifetimes' (0: free, 1: held), held a few instructions at a time. A thread that
 * finds it held (map.c: mf_life_lock_wait) spins a little, then gives the processor away, then
 * sleeps 50 us at a time: under SCHED_FIFO a yield gives way only to threads of its own
 * priority, and a holder of lower priority on the same processor would never get to release
 * it. */
void mf_life_lock_wait(int *lock);
static inline void mf_life_lock_take(int *lock)
{
	if (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
		mf_life_lock_wait(lock);
}
static inline void mf_life_lock_give(int *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* map.c. Under sampling (at start): the filter is made. */
void mf_life_map_sampled(void);
/* x into the map: 1; 0 without memory. A block the map held at x's address was freed where
 * the profiler did not see it: it is left in *stale (addr 0: none). */
int mf_life_map_put(const struct mf_life_slot *x, struct mf_life_slot *stale);
/* The block at addr out of the map into *out: 1; 0 if the map has none. */
int mf_life_map_take(uintptr_t addr, struct mf_life_slot *out);
void mf_life_map_prefork(void);
void mf_life_map_postfork_parent(void);
void mf_life_map_postfork_child(void); /* empty, the filter too */

#endif
