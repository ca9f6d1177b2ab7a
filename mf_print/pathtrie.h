/* A trie of paths of labels: each node a label under a parent, found again by the pair
 * (parent, label) and numbered in the order made, so that a node's parent is made before it
 * (a pass from the last node to the first sums children into parents). --diff's signed tree,
 * --html's flame graph and --tags' tag paths are such tries; --dot's edges are the same pairs,
 * (caller, callee). The caller's own arrays, indexed by node, carry the rest. Never prints. */
#ifndef MF_PATHTRIE_H
#define MF_PATHTRIE_H

#include <stddef.h>
#include <stdint.h>

#include "idset.h"

struct mf_pathtrie {
	uint32_t *parent, *label; /* by node */
	size_t count, cap;
	struct mf_idset set; /* nodes by (parent, label) */
};

/* An empty trie. 0 or -ENOMEM. */
int mf_pathtrie_init(struct mf_pathtrie *t);
/* The node labelled label under parent (any value: MF_NONE for a root), made if new, in
 * *node; a new node is number t->count - 1. 0 or -ENOMEM. */
int mf_pathtrie_child(struct mf_pathtrie *t, uint32_t parent, uint32_t label, uint32_t *node);
void mf_pathtrie_free(struct mf_pathtrie *t);

#endif
