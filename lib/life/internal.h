/* The parts of lifetimes (MALLOC_FREQ_LIFETIMES=1) and how they call each other (lib/life/
 * only):
 *   life.h  what the rest of lib/ sees (the entry points, a thread's start and end, fork)
 *   life.c  the entry points: each block's leaf counts, the clock, the live sum and the peak
 *   map.c   the address map from each live block to its leaf (a table per thread file, the
 *           owner, and a shared one for the rest), and its filter under sampling
 *   bias.c  the owner's way into its own table without a locked instruction (membarrier)
 * Why a table per owner, found by a directory of regions: map.c's header.
 * Everything here runs inside malloc: no malloc, no stdio, errno preserved. */
#ifndef MF_LIFE_INTERNAL_H
#define MF_LIFE_INTERNAL_H

#include <stdint.h>

#include "life/life.h"
#include "mf_internal.h"

#define MF_LIFE_FILES 65536 /* thread files numbered at most */

/* bias.c: the owner's way into its own table without a locked instruction. */
extern int mf_life_bias; /* membarrier is to be had: an owner's table starts not shared */
void mf_life_bias_init(void);
/* Every thread of the process passes a full memory barrier (the other side of an owner's
 * store and load). Refused (not seen to happen: a filter the profiler did not see), or after
 * mf_life_bias_off, no new table is biased, and this waits a millisecond instead. */
void mf_life_bias_barrier(void);
void mf_life_bias_off(void); /* membarrier is never asked again */

/* map.c. Under sampling (at start): the filter is made. */
void mf_life_map_sampled(void);
/* Room for the owner of file number file (as it is numbered): 0, or -1 without memory. */
int mf_life_map_file(uint32_t file);
/* file's owner entered, as a change of its lifetime counts (frees, freed_bytes, lifetime_ns,
 * lifetime) is made: by its lock, or by its own thread without it (bias.c), or neither while
 * the process has one thread; and left. A thread holds one owner at a time. */
void mf_life_map_hold(uint32_t file);
void mf_life_map_release(uint32_t file);
/* x into the map: 1; 0 without memory. A block the map held at x's address was freed where
 * the profiler did not see it: it is left in *stale (addr 0: none). */
int mf_life_map_put(const struct mf_life_slot *x, struct mf_life_slot *stale);
/* The block at addr out of the map into *out: 1; 0 if the map has none made by tick born_by
 * (UINT64_MAX: at any time). hold: with 1, the lock of out->file's owner is held
 * (mf_life_map_hold). */
int mf_life_map_take(uintptr_t addr, uint64_t born_by, struct mf_life_slot *out, int hold);
/* file's thread ended: its table is shared from now on (it is never in it again). */
void mf_life_map_owner_gone(uint32_t file);
/* No table biased from now on (the owners of files numbered below files waited for), and
 * membarrier never asked again. */
void mf_life_map_unbias_all(uint32_t files);
void mf_life_map_prefork(uint32_t files); /* (the owners of files numbered below files) */
void mf_life_map_postfork_parent(void);
void mf_life_map_postfork_child(void); /* empty, the filter too */
/* In a child forked by a signal handler that interrupted this thread in the map: every lock
 * given back (held by threads the child does not have, or by the interrupted call, which
 * then goes on in the child's copy). */
void mf_life_map_unlock_all(void);

#endif
