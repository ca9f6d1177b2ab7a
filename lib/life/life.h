/* What the rest of the library sees of lib/life/: lifetimes (MALLOC_FREQ_LIFETIMES=1), the
 * address map from each live block to the leaf that allocated it, for the entry points, the
 * thread's start and end, fork and snapshots. Runs inside malloc: no malloc, no stdio. */
#ifndef MF_LIFE_H
#define MF_LIFE_H

#include <stddef.h>
#include <stdint.h>

#include "malloc_freq_format.h"
#include "mf_internal.h"

/* Lifetimes (MALLOC_FREQ_LIFETIMES=1), the address map from each live block to the
 * leaf that allocated it. Off, nothing here is called. */
extern int mf_life_on;
/* Under sampling, the filter of the addresses that may be in the map (NULL: any may be): a
 * count per hash of an address, MF_LIFE_FILTER_BITS bits of it, of the map's blocks that have
 * that hash (255: that many or more, for good). 0 is sure: no such block is in the map. */
#define MF_LIFE_FILTER_BITS 20
extern uint8_t *mf_life_filter;
/* p's count in the filter: the top bits of a hash of its address. */
static inline uint64_t mf_life_filter_at(const void *p)
{
	return (uint64_t)((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> (64 - MF_LIFE_FILTER_BITS);
}
/* Whether block p may be in the map (a free of one that is not costs this only). */
static inline int mf_life_maybe(const void *p)
{
	const uint8_t *f = mf_life_filter;
	if (mf_unlikely(!f)) /* (not sampling: the map knows every block) */
		return 1;
	return __atomic_load_n(&f[mf_life_filter_at(p)], __ATOMIC_RELAXED);
}
/* A thread file's nodes, registered so that any thread can charge a free to it (also after
 * its thread ended: the file stays mapped); its number, or 0 when the registry is full. */
uint32_t mf_life_file_new(struct mf_node *nodes);
/* Block p of n bytes, just returned by the call counted at the thread's last leaf record. */
void mf_life_alloc(void *p, size_t n);
/* Block p (not NULL) freed: charged to its leaf, or (not sampling) counted as a free of an
 * unknown block. Under sampling, callers first ask mf_life_maybe. */
void mf_life_free(void *p);
/* A live block of the lifetimes' address map: where it is, what it requested, the leaf that
 * allocated it, when. */
struct mf_life_slot {
	uintptr_t addr; /* 0: empty */
	uint64_t size;
	uint32_t file, node; /* the leaf: node node of the nodes of file number file */
	uint64_t born;	     /* the time-stamp counter */
};
/* realloc's old block (not NULL) out of the map before the real call, which may free it and
 * another thread be given its address at once: 1 (it is in *held), 0 (the map did not have
 * it), or -1 (nothing to do: a signal handler's call in the map, the profiler's own, or a
 * block not sampled). */
int mf_life_realloc_take(void *old, struct mf_life_slot *held);
/* ... and the real call returned p of n bytes: a failed call gives the block back to the map;
 * otherwise it was freed (taken 1: charged to its leaf; 0: a free of an unknown block) and p
 * is tracked. */
void mf_life_realloc_done(int taken, const struct mf_life_slot *held, void *p, size_t n);
/* At exit: a process that ends at its peak has the end as its peak. */
void mf_life_exit(void);
/* Every leaf's peak fields brought up to date (at exit, and before a snapshot copies them). */
void mf_life_settle(void);
/* Whether an ended thread's nodes (n of them, with lifetimes) can change no more: none of its
 * blocks is live, so no free charges it, and every leaf's peak figures are 0, so no new peak
 * changes them either (mf_life_settle leaves such a leaf alone). */
int mf_life_nodes_final(const struct mf_node *nodes, uint64_t n);
void mf_life_thread_exit(void);	 /* the thread's live bytes not yet counted, counted */
void mf_life_init(void);	 /* at start, with lifetimes on */
uint64_t mf_life_live_now(void); /* the process's live bytes, this thread's changes in */
void mf_life_prefork(void);
void mf_life_postfork_parent(void);
/* Before the program installs a seccomp filter or enters strict mode: no membarrier from then
 * on (every thread's table locked, lib/life/bias.c). */
void mf_life_confine(void);
void mf_life_postfork_child(void); /* the parent's blocks and files are not the child's */

#endif
