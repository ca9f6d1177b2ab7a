/* The one sort-and-fold of mf_print's reports: items (samples, processes) grouped by a key (a
 * label), groups ordered by a metric with those below the threshold folded into one line, or
 * ordered by their labels' text. A tree is this applied level by level to the items of each
 * group shown. */
#ifndef MF_FOLD_H
#define MF_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct mf_group {
	uint32_t key;
	uint32_t first, count; /* its items: items[first .. first + count) */
	uint64_t value[MF_METRICS];
};

struct mf_fold {
	struct mf_group *groups;
	size_t count, cap;
	size_t shown;			   /* groups[0 .. shown) are shown, in order */
	uint64_t folded_value[MF_METRICS]; /* the sum of groups[shown .. count) */
};

/* Working memory of mf_fold_group, shared by every level of a tree (each level has finished
 * with it before the next starts). */
struct mf_fold_scratch {
	uint64_t *pairs, *tmp;
	uint32_t *items;
	size_t cap;
};

/* Reorders items[0..n) (and keys[0..n), keys[i] being the key of items[i], and views[0..n)
 * unless NULL: a word that goes with each item) so that the items of one key are adjacent, and
 * makes f one group per key, the sum of the items' values (values[metric][item]) in each;
 * groups come in key order, all shown. Items whose key is MF_NONE are left out of every group,
 * at the end. sum (may be NULL) is the sum of all n items' values, when the caller knows it.
 * 0 or -ENOMEM. */
int mf_fold_group(struct mf_fold *f, struct mf_fold_scratch *s, uint32_t *items, uint64_t *views,
		  uint32_t *keys, size_t n, uint64_t *const values[MF_METRICS],
		  const uint64_t *sum);

/* Orders f's groups by value[metric], largest first, equal ones by rank[key] (the key's place
 * in text order; NULL: by key), and folds the groups below threshold percent of total. */
void mf_fold_sort(struct mf_fold *f, enum mf_metric metric, uint64_t total, double threshold,
		  const uint32_t *rank);

/* Orders f's groups by rank[key], folding none. */
void mf_fold_sort_keys(struct mf_fold *f, const uint32_t *rank);

void mf_fold_free(struct mf_fold *f);

/* One mf_fold per level of a tree, reused by each node of the level in turn. */
struct mf_fold_levels {
	struct mf_fold *v;
	size_t count;
};
/* Levels 0 to depth (made once: pointers to them stay valid). 0 or -ENOMEM. */
int mf_fold_levels_init(struct mf_fold_levels *l, uint32_t depth);
void mf_fold_levels_free(struct mf_fold_levels *l);
void mf_fold_scratch_free(struct mf_fold_scratch *s);

#endif
