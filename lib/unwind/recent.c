/* A thread's recent stacks. Allocating code calls from a few hot stacks over and over; each
 * is kept here with the trie leaf it was counted at, and the words of the stack that decide
 * what a walk from its first frame finds (mf_walk_checks). A call from the same first frame
 * whose words all hold what they held is a call from the same stack: counted at the leaf,
 * without a walk, a hash or the trie. The words are read innermost first, as a walk would:
 * each lies in a frame the ones before it showed to be the same. Runs inside malloc. */
#include "config.h"

#include <string.h>

#include "unwind/internal.h"

/* The set of a stack: by where the program called the entry point, and the stack's depth
 * there (sites called at one depth, and one site at several depths, go apart). */
static inline unsigned mf_recent_set(uintptr_t caller, uintptr_t sp)
{
	return (unsigned)(((sp >> 4 ^ caller) * 0x9e3779b97f4a7c15ull) >> 59) &
	       (MF_RECENT_SETS - 1);
}

uint32_t mf_recent_find(const struct mf_recent *r, int entry, const struct mf_frame *from)
{
	struct mf_recent_stack *const *way = r->way[mf_recent_set(from->caller, from->sp)];
	unsigned epoch = mf_walk_epoch_now();
	for (int i = 0; i < MF_RECENT_WAYS; i++) {
		const struct mf_recent_stack *s = way[i];
		if (!s || s->sp != from->sp || s->pc != from->pc ||
		    ((s->bp ^ from->bp) & s->bp_mask) || s->epoch != epoch || s->entry != entry)
			continue;
		const struct mf_walk_check *c = s->check, *end = c + s->checks;
		for (; c + 2 <= end; c += 2) /* two at a time, still in order */
			if (*c[0].at != c[0].was || *c[1].at != c[1].was)
				goto next;
		if (c == end || *c->at == c->was)
			return s->node;
	next:;
	}
	return 0;
}

/* Room for a stack of as many words as may be kept at the end of the arena, or NULL. */
static struct mf_recent_stack *mf_recent_room(struct mf_recent *r)
{
	size_t size = sizeof(struct mf_recent_stack) +
		      (size_t)MF_RECENT_CHECKS * sizeof(struct mf_walk_check);
	if (r->used + size > MF_RECENT_ARENA)
		return NULL;
	return (struct mf_recent_stack *)(r->arena + r->used);
}

void mf_recent_put(struct mf_recent *r, const struct mf_walk_stacks *ws, int entry, uint32_t node)
{
	int n = ws->count;
	if (n < 1 || n - 1 > MF_RECENT_CHECKS)
		return;
	struct mf_recent_stack *s = mf_recent_room(r);
	if (!s) { /* full: start over */
		memset(r->way, 0, sizeof(r->way));
		r->used = 0;
		s = mf_recent_room(r);
	}
	int k = mf_walk_checks(ws, s->check, MF_RECENT_CHECKS, &s->bp_mask);
	if (k < 0)
		return;
	s->checks = k;
	s->pc = ws->pc[n - 1];
	s->sp = ws->f[n - 1].sp;
	s->bp = ws->f[n - 1].bp;
	s->epoch = (unsigned)ws->epoch;
	s->entry = entry;
	s->node = node;
	r->used += sizeof(*s) + (size_t)k * sizeof(struct mf_walk_check);
	/* (the caller's return address is the first word checked: that of frame n - 2) */
	unsigned set = mf_recent_set(n >= 2 ? ws->pc[n - 2] : 0, s->sp);
	r->way[set][r->next[set]] = s;
	r->next[set] = (unsigned char)((r->next[set] + 1) % MF_RECENT_WAYS);
}
