/* Grouping, ordering and folding (see fold.h). Items are grouped by a radix sort of (key, item)
 * pairs: linear in their number, so a tree of millions of stacks costs its size times its
 * depth, not more. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fold.h"
#include "text.h"

static int mf_scratch_room(struct mf_fold_scratch *s, size_t n)
{
	if (n <= s->cap)
		return 0;
	free(s->pairs);
	free(s->tmp);
	free(s->items);
	s->pairs = malloc(n * sizeof(*s->pairs));
	s->tmp = malloc(n * sizeof(*s->tmp));
	s->items = malloc(n * sizeof(*s->items));
	s->cap = s->pairs && s->tmp && s->items ? n : 0;
	return s->cap ? 0 : -ENOMEM;
}

/* Stable sort of pairs by their high 32 bits (the key): insertion for a few, else a radix
 * sort, 8 bits a pass, over the bits the keys use. */
static void mf_sort_pairs(uint64_t *pairs, uint64_t *tmp, size_t n)
{
	if (n < 48) {
		for (size_t i = 1; i < n; i++) {
			uint64_t x = pairs[i];
			size_t j = i;
			for (; j > 0 && pairs[j - 1] >> 32 > x >> 32; j--)
				pairs[j] = pairs[j - 1];
			pairs[j] = x;
		}
		return;
	}
	uint64_t all = 0;
	for (size_t i = 0; i < n; i++)
		all |= pairs[i];
	for (int shift = 32; shift < 64 && all >> shift; shift += 8) {
		size_t count[256] = {0};
		for (size_t i = 0; i < n; i++)
			count[(pairs[i] >> shift) & 0xff]++;
		if (count[(pairs[0] >> shift) & 0xff] == n)
			continue; /* every key has this digit */
		size_t at = 0;
		for (size_t d = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(pairs[i] >> shift) & 0xff]++] = pairs[i];
		memcpy(pairs, tmp, n * sizeof(*pairs));
	}
}

static int mf_group_push(struct mf_fold *f, uint32_t key, size_t first)
{
	struct mf_group *g = mf_array_push(f->groups, f->count, f->cap);
	if (!g)
		return -ENOMEM;
	g->key = key;
	g->first = (uint32_t)first;
	return 0;
}

int mf_fold_group(struct mf_fold *f, struct mf_fold_scratch *s, uint32_t *items, uint64_t *views,
		  uint32_t *keys, size_t n, uint64_t *const values[MF_METRICS], const uint64_t *sum)
{
	f->count = f->shown = 0;
	memset(f->folded_value, 0, sizeof(f->folded_value));
	memset(f->left_value, 0, sizeof(f->left_value));
	int same = 1;
	for (size_t i = 1; i < n && same; i++)
		same = keys[i] == keys[0];
	if (!same) {
		if (mf_scratch_room(s, n))
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			s->pairs[i] = (uint64_t)keys[i] << 32 | i;
		mf_sort_pairs(s->pairs, s->tmp, n);
		for (size_t i = 0; i < n; i++) {
			size_t at = (uint32_t)s->pairs[i];
			keys[i] = (uint32_t)(s->pairs[i] >> 32);
			s->items[i] = items[at];
			if (views)
				s->tmp[i] = views[at];
		}
		memcpy(items, s->items, n * sizeof(*items));
		if (views)
			memcpy(views, s->tmp, n * sizeof(*views));
	}
	if (same && sum && n && keys[0] != MF_NONE) { /* one group of them all */
		if (mf_group_push(f, keys[0], 0))
			return -ENOMEM;
		f->groups[0].count = (uint32_t)n;
		memcpy(f->groups[0].value, sum, sizeof(f->groups[0].value));
		f->shown = 1;
		return 0;
	}
	int flag = 0;
	size_t i = 0;
	for (; i < n && keys[i] != MF_NONE; i++) {
		if ((!i || keys[i] != keys[i - 1]) && mf_group_push(f, keys[i], i))
			return -ENOMEM;
		struct mf_group *g = &f->groups[f->count - 1];
		g->count++;
		for (int k = 0; k < MF_METRICS; k++)
			g->value[k] = mf_sat_add(g->value[k], values[k][items[i]], &flag);
	}
	for (; i < n; i++)
		for (int k = 0; k < MF_METRICS; k++)
			f->left_value[k] = mf_sat_add(f->left_value[k], values[k][items[i]], &flag);
	f->shown = f->count;
	return 0;
}

static const uint32_t *mf_sort_rank;
static enum mf_metric mf_sort_metric;

static int mf_key_cmp(const struct mf_group *x, const struct mf_group *y)
{
	uint32_t a = mf_sort_rank ? mf_sort_rank[x->key] : x->key;
	uint32_t b = mf_sort_rank ? mf_sort_rank[y->key] : y->key;
	return a < b ? -1 : a > b;
}

static int mf_value_cmp(const void *a, const void *b)
{
	const struct mf_group *x = a, *y = b;
	uint64_t vx = x->value[mf_sort_metric], vy = y->value[mf_sort_metric];
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return mf_key_cmp(x, y);
}

static int mf_rank_cmp(const void *a, const void *b)
{
	return mf_key_cmp(a, b);
}

void mf_fold_sort(struct mf_fold *f, enum mf_metric metric, uint64_t total, double threshold,
		  const uint32_t *rank)
{
	mf_sort_rank = rank;
	mf_sort_metric = metric;
	if (f->count > 1)
		qsort(f->groups, f->count, sizeof(*f->groups), mf_value_cmp);
	int flag = 0;
	f->shown = 0;
	memset(f->folded_value, 0, sizeof(f->folded_value));
	for (size_t i = 0; i < f->count; i++) {
		if (mf_text_pct(f->groups[i].value[metric], total) >= threshold) {
			f->shown = i + 1; /* ordered by the value: all before it are shown too */
			continue;
		}
		for (int k = 0; k < MF_METRICS; k++)
			f->folded_value[k] =
			    mf_sat_add(f->folded_value[k], f->groups[i].value[k], &flag);
	}
}

void mf_fold_sort_keys(struct mf_fold *f, const uint32_t *rank)
{
	mf_sort_rank = rank;
	if (f->count > 1)
		qsort(f->groups, f->count, sizeof(*f->groups), mf_rank_cmp);
	f->shown = f->count;
}

int mf_fold_sums(const struct mf_model *m, enum mf_fold_by by, uint64_t *sums[MF_METRICS],
		 int *flag)
{
	size_t n = by == MF_FOLD_BY_STACK    ? m->nstacks
		   : by == MF_FOLD_BY_THREAD ? m->nthreads
					     : m->nprocesses;
	for (int k = 0; k < MF_METRICS; k++)
		if (!(sums[k] = calloc(n ? n : 1, sizeof(uint64_t)))) {
			while (k-- > 0) {
				free(sums[k]);
				sums[k] = NULL;
			}
			return -ENOMEM;
		}
	for (size_t s = 0; s < m->nsamples; s++) {
		const struct mf_sample *x = &m->samples[s];
		uint32_t key = by == MF_FOLD_BY_STACK	 ? x->stack
			       : by == MF_FOLD_BY_THREAD ? x->thread
							 : m->threads[x->thread].process;
		for (int k = 0; k < MF_METRICS; k++)
			sums[k][key] = mf_sat_add(sums[k][key], m->values[k][s], flag);
	}
	return 0;
}

void mf_fold_free(struct mf_fold *f)
{
	free(f->groups);
	memset(f, 0, sizeof(*f));
}

void mf_fold_scratch_free(struct mf_fold_scratch *s)
{
	free(s->pairs);
	free(s->tmp);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

int mf_fold_levels_init(struct mf_fold_levels *l, uint32_t depth)
{
	l->count = (size_t)depth + 1;
	l->v = calloc(l->count, sizeof(*l->v));
	return l->v ? 0 : -ENOMEM;
}

void mf_fold_levels_free(struct mf_fold_levels *l)
{
	for (size_t i = 0; i < l->count; i++)
		mf_fold_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}
