/* Paths of labels as one trie (see pathtrie.h): the nodes in two arrays, found by a hash set
 * of their ids keyed by (parent, label). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "pathtrie.h"

static uint64_t mf_pathtrie_hash(uint32_t parent, uint32_t label)
{
	return mf_hash_mix(mf_hash_mix(0x2545f4914f6cdd1dull, parent), label);
}

static uint64_t mf_pathtrie_rehash(const void *ctx, uint32_t id)
{
	const struct mf_pathtrie *t = ctx;
	return mf_pathtrie_hash(t->parent[id], t->label[id]);
}

int mf_pathtrie_init(struct mf_pathtrie *t)
{
	memset(t, 0, sizeof(*t));
	return mf_idset_init(&t->set, 1024);
}

int mf_pathtrie_child(struct mf_pathtrie *t, uint32_t parent, uint32_t label, uint32_t *node)
{
	uint64_t h = mf_pathtrie_hash(parent, label);
	for (size_t at = mf_idset_first(&t->set, h); t->set.slot[at] != MF_IDSET_EMPTY;
	     at = mf_idset_next(&t->set, at)) {
		uint32_t id = t->set.slot[at];
		if (t->parent[id] == parent && t->label[id] == label) {
			*node = id;
			return 0;
		}
	}
	size_t cap = t->cap;
	uint32_t *p = mf_array_room(t->parent, t->count, &cap, sizeof(*p));
	if (!p)
		return -ENOMEM;
	t->parent = p;
	cap = t->cap;
	uint32_t *l = mf_array_room(t->label, t->count, &cap, sizeof(*l));
	if (!l)
		return -ENOMEM;
	t->label = l;
	t->cap = cap;
	if (mf_idset_room(&t->set, mf_pathtrie_rehash, t))
		return -ENOMEM;
	*node = (uint32_t)t->count;
	t->parent[t->count] = parent;
	t->label[t->count++] = label;
	mf_idset_put(&t->set, h, *node);
	return 0;
}

void mf_pathtrie_free(struct mf_pathtrie *t)
{
	free(t->parent);
	free(t->label);
	free(t->set.slot);
	memset(t, 0, sizeof(*t));
}
