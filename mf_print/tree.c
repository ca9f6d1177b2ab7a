/* Printing a call tree (see tree.h): the samples are grouped by their label at the root, each
 * group shown is grouped again by the next label, and so on; a group below the threshold is
 * folded and never looked into. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "text.h"
#include "tree.h"

struct mf_tree {
	FILE *out;
	const struct mf_model *m;
	const struct mf_labels *l;
	const struct mf_report_options *o;
	const struct mf_tree_spec *spec;
	uint64_t total;
	int rooted;	 /* level 0 is the program */
	uint32_t *keys;	 /* by position in items */
	uint64_t *views; /* by position in items: mf_model_view of the item */
	struct mf_fold_scratch scratch;
	struct mf_fold_levels levels;
	struct mf_strbuf prefix; /* the tree's left margin, grown as it deepens */
	size_t *life_first;	 /* (lifetimes) the lifetime cells by sample */
	uint32_t *life_cell;
};

/* The label at level of a sample's path: its program first when rooted. */
static uint32_t mf_tree_key(const struct mf_tree *t, uint32_t sample, uint64_t view, uint32_t level)
{
	if (t->rooted && level == 0)
		return mf_labels_program(t->l, t->m, sample);
	return t->spec->key(t->m, t->l, sample, view, level - (uint32_t)t->rooted);
}

/* A line: its counts, and (lifetimes) the median lifetime of its samples items[0..n) (NULL:
 * not shown). */
static void mf_tree_line(struct mf_tree *t, const uint64_t value[MF_METRICS], const uint32_t *items,
			 size_t n, const char *branch, const char *text)
{
	char b[32], time[32] = "", temp[16] = "", shortl[16] = "", leaked[96] = "", most[64] = "";
	mf_text_bytes(b, sizeof(b), value[MF_METRIC_BYTES]);
	if (t->m->weighted) /* (a column of its own only when there is time) */
		snprintf(time, sizeof(time), " %11.3f", (double)value[MF_METRIC_TIME] / 1e6);
	if (t->m->has_leaf_records)
		mf_text_temporary(temp, sizeof(temp), value[MF_METRIC_TEMPORARY],
				  value[MF_METRIC_CALLS]);
	if (mf_model_holds(t->m, MF_METRIC_SHORT)) /* (a share of the calls, as temp) */
		mf_text_temporary(shortl, sizeof(shortl), value[MF_METRIC_SHORT],
				  value[MF_METRIC_CALLS]);
	if (t->m->has_lifetimes)
		mf_text_life(leaked, sizeof(leaked), value[MF_METRIC_LEAKED_BLOCKS],
			     value[MF_METRIC_LEAKED], value[MF_METRIC_PEAK_BLOCKS],
			     value[MF_METRIC_PEAK],
			     items ? mf_model_median(t->m->lives, t->life_first, t->life_cell,
						     items, n, MF_LIFETIME_BUCKETS)
				   : -1);
	if (mf_model_holds(t->m, MF_METRIC_MAX_LIVE))
		mf_text_most(most, sizeof(most), value[MF_METRIC_MAX_BLOCKS],
			     value[MF_METRIC_MAX_LIVE], value[MF_METRIC_FREED],
			     value[MF_METRIC_LIFETIME]);
	fprintf(t->out, "%12" PRIu64 " %6.2f%% %11s%s%s%s%s%s  %.*s%s%s\n", value[MF_METRIC_CALLS],
		mf_text_pct(value[t->o->metric], t->total), b, time, temp, shortl, leaked, most,
		(int)t->prefix.len, t->prefix.s, branch, text);
}

/* The path of one sample from level on: a line per label, each the only child of the one
 * before (it is above the threshold, or it would not have been reached). */
static int mf_tree_chain(struct mf_tree *t, uint32_t sample, uint64_t view, uint32_t level)
{
	uint64_t value[MF_METRICS];
	for (int k = 0; k < MF_METRICS; k++)
		value[k] = t->m->values[k][sample];
	if (mf_text_pct(value[t->o->metric], t->total) < t->o->threshold) {
		char text[128];
		snprintf(text, sizeof(text), "(1 more path below %g%%)", t->o->threshold);
		if (mf_tree_key(t, sample, view, level) != MF_NONE)
			mf_tree_line(t, value, &sample, 1, level ? "`- " : "", text);
		return 0;
	}
	int r = 0;
	for (uint32_t key; !r && (key = mf_tree_key(t, sample, view, level)) != MF_NONE; level++) {
		mf_tree_line(t, value, &sample, 1, level ? "`- " : "", t->l->text[key]);
		if (level)
			r = mf_strbuf_add(&t->prefix, "   ", 3);
	}
	return r;
}

/* The children at level of the node whose samples are items[0..n). */
static int mf_tree_level(struct mf_tree *t, uint32_t *items, uint64_t *views, uint32_t *keys,
			 size_t n, uint32_t level, const uint64_t *sum)
{
	if (n == 1)
		return mf_tree_chain(t, items[0], views[0], level);
	for (size_t i = 0; i < n; i++)
		keys[i] = mf_tree_key(t, items[i], views[i], level);
	struct mf_fold *f = &t->levels.v[level];
	int r = mf_fold_group(f, &t->scratch, items, views, keys, n, t->m->values, sum);
	if (r)
		return r;
	mf_fold_sort(f, t->o->metric, t->total, t->o->threshold, t->l->rank);
	int top = level == 0;
	size_t folded = f->count - f->shown;
	for (size_t i = 0; i < f->shown && !r; i++) {
		const struct mf_group *g = &f->groups[i];
		int last = i + 1 == f->shown && !folded;
		mf_tree_line(t, g->value, items + g->first, g->count,
			     top    ? ""
			     : last ? "`- "
				    : "|- ",
			     t->l->text[g->key]);
		size_t keep = t->prefix.len;
		r = mf_strbuf_add(&t->prefix, top ? "" : last ? "   " : "|  ", top ? 0 : 3);
		if (!r)
			r = mf_tree_level(t, items + g->first, views + g->first, keys + g->first,
					  g->count, level + 1, g->value);
		t->prefix.len = keep;
	}
	if (!r && folded) {
		char text[128];
		snprintf(text, sizeof(text), "(%zu more path%s below %g%%)", folded,
			 folded == 1 ? "" : "s", t->o->threshold);
		mf_tree_line(t, f->folded_value, NULL, 0, top ? "" : "`- ", text);
	}
	return r;
}

int mf_tree_report(FILE *out, const struct mf_model *m, const struct mf_report_options *o,
		   const struct mf_tree_spec *spec)
{
	struct mf_labels l;
	struct mf_tree t = {.out = out, .m = m, .l = &l, .o = o, .spec = spec};
	size_t n = m->nsamples;
	uint32_t *items = malloc((n ? n : 1) * sizeof(*items));
	t.keys = malloc((n ? n : 1) * sizeof(*t.keys));
	t.views = malloc((n ? n : 1) * sizeof(*t.views));
	int r = items && t.keys && t.views ? 0 : -ENOMEM;
	if (!r)
		r = mf_labels_build(&l, m, MF_LABEL_LINE, o->full_names, mf_text_clean);
	if (!r)
		r = mf_labels_rank(&l);
	if (!r) /* a level past the deepest stack's end, and one for the process */
		r = mf_fold_levels_init(&t.levels, m->max_depth + 2);
	if (!r && m->has_lifetimes)
		r = mf_model_cells_by(m, m->lives, m->nlives, 0, &t.life_first, &t.life_cell);
	if (!r) {
		for (size_t i = 0; i < n; i++) {
			items[i] = (uint32_t)i;
			t.views[i] = mf_model_view(m, (uint32_t)i);
		}
		t.total = mf_model_total(m, o->metric, NULL);
		t.rooted = mf_labels_rooted(&l, o->merge_processes);
		fprintf(out, "\n%s", spec->heading);
		if (o->threshold > 0) /* (-t 0: nothing is folded, nothing to say) */
			fprintf(out, "; paths below %g%% of all %s are folded (--threshold)",
				o->threshold, mf_metric_info[o->metric].plural);
		fputs("\n\n", out);
		fprintf(out, "%12s %7s %11s%s%s%s%s%s  %s\n", "calls", "%", "bytes",
			m->weighted ? "      cpu ms" : "", m->has_leaf_records ? "    temp" : "",
			mf_model_holds(m, MF_METRIC_SHORT) ? "   short" : "",
			m->has_lifetimes ? MF_TEXT_LIFE_HEADING : "",
			mf_model_holds(m, MF_METRIC_MAX_LIVE) ? MF_TEXT_MOST_HEADING : "",
			spec->column);
		r = mf_tree_level(&t, items, t.views, t.keys, n, 0, NULL);
	}
	mf_labels_free(&l);
	mf_fold_scratch_free(&t.scratch);
	mf_fold_levels_free(&t.levels);
	free(t.prefix.s);
	free(t.life_first);
	free(t.life_cell);
	free(t.keys);
	free(t.views);
	free(items);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
