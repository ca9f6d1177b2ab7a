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
	uint32_t *keys; /* by position in items */
	struct mf_fold_scratch scratch;
	struct mf_strbuf prefix; /* the tree's left margin, grown as it deepens */
};

static void mf_tree_line(struct mf_tree *t, const uint64_t value[MF_METRICS], const char *branch,
			 const char *text)
{
	char b[32];
	mf_text_bytes(b, sizeof(b), value[MF_METRIC_BYTES]);
	fprintf(t->out, "%12" PRIu64 " %6.2f%% %11s  %.*s%s%s\n", value[MF_METRIC_CALLS],
		mf_text_pct(value[t->o->metric], t->total), b, (int)t->prefix.len, t->prefix.s,
		branch, text);
}

/* The children at level of the node whose samples are items[0..n). */
static int mf_tree_level(struct mf_tree *t, uint32_t *items, uint32_t *keys, size_t n,
			 uint32_t level)
{
	for (size_t i = 0; i < n; i++)
		keys[i] = t->spec->key(t->m, t->l, items[i], level);
	struct mf_fold f = {0};
	int r = mf_fold_group(&f, &t->scratch, items, keys, n, t->m->values);
	if (r)
		return r;
	mf_fold_sort(&f, t->o->metric, t->total, t->o->threshold, t->l->rank);
	int top = level == 0;
	size_t folded = f.count - f.shown;
	for (size_t i = 0; i < f.shown && !r; i++) {
		const struct mf_group *g = &f.groups[i];
		int last = i + 1 == f.shown && !folded;
		mf_tree_line(t, g->value, top ? "" : last ? "`- " : "|- ", t->l->text[g->key]);
		size_t keep = t->prefix.len;
		r = mf_strbuf_add(&t->prefix, top ? "" : last ? "   " : "|  ", top ? 0 : 3);
		if (!r)
			r = mf_tree_level(t, items + g->first, keys + g->first, g->count,
					  level + 1);
		t->prefix.len = keep;
	}
	if (!r && folded) {
		char text[128];
		snprintf(text, sizeof(text), "(%zu more path%s below %.2g%%)", folded,
			 folded == 1 ? "" : "s", t->o->threshold);
		mf_tree_line(t, f.folded_value, top ? "" : "`- ", text);
	}
	mf_fold_free(&f);
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
	int r = items && t.keys ? 0 : -ENOMEM;
	if (!r)
		r = mf_labels_build(&l, m, MF_LABEL_LINE, o->full_names, NULL);
	if (!r)
		r = mf_labels_rank(&l);
	if (!r) {
		for (size_t i = 0; i < n; i++)
			items[i] = (uint32_t)i;
		t.total = mf_model_total(m, o->metric, NULL);
		fprintf(out, "\n%s; paths below %.2g%% of all %s are folded (--threshold)\n\n",
			spec->heading, o->threshold, mf_metric_info[o->metric].name);
		fprintf(out, "%12s %7s %11s  %s\n", "calls", "%", "bytes", spec->column);
		r = mf_tree_level(&t, items, t.keys, n, 0);
	}
	mf_labels_free(&l);
	mf_fold_scratch_free(&t.scratch);
	free(t.prefix.s);
	free(t.keys);
	free(items);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
