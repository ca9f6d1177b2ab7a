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
	uint64_t left_value[MF_METRICS];   /* the sum of the items left out (key MF_NONE) */
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
 * at the end, their sum in f->left_value. sum (may be NULL) is the sum of all n items' values, when
 * the caller knows it. 0 or -ENOMEM. */
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

/* Adds sample s's values (every metric) to row, each sum stopping at 2^64 - 1 (*flag set). */
static inline void mf_fold_add(uint64_t row[MF_METRICS], const struct mf_model *m, size_t s,
			       int *flag)
{
	for (int k = 0; k < MF_METRICS; k++)
		row[k] = mf_sat_add(row[k], m->values[k][s], flag);
}

/* Adds the values of add to row, as mf_fold_add. */
static inline void mf_fold_add_row(uint64_t row[MF_METRICS], const uint64_t add[MF_METRICS],
				   int *flag)
{
	for (int k = 0; k < MF_METRICS; k++)
		row[k] = mf_sat_add(row[k], add[k], flag);
}

/* The values of key in columns sums[metric][key] as one row. */
static inline void mf_fold_row(uint64_t row[MF_METRICS], uint64_t *const sums[MF_METRICS],
			       uint32_t key)
{
	for (int k = 0; k < MF_METRICS; k++)
		row[k] = sums[k][key];
}

/* What mf_fold_sums sums the samples by. */
enum mf_fold_by { MF_FOLD_BY_STACK, MF_FOLD_BY_THREAD, MF_FOLD_BY_PROCESS };

/* Every sample's values summed by its stack, thread or process: sums[metric][key], one column
 * per metric allocated here (free each), every key of the model in it (a key no sample has:
 * zeros), sums stopping at 2^64 - 1 (*flag set). The columns serve mf_fold_group as the values
 * of items that are those keys. 0 or -ENOMEM (then none is left allocated). */
int mf_fold_sums(const struct mf_model *m, enum mf_fold_by by, uint64_t *sums[MF_METRICS],
		 int *flag);

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
