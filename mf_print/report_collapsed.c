/* --collapsed, for flamegraph.pl and speedscope: "outermost;...;caller;malloc COUNT", one line
 * per distinct stack as labelled (function, or with --lines function file:line), ordered frame
 * by frame. The format's own characters are rewritten here: ';' separates frames and a
 * newline ends the line, so a name holding either has it replaced by ':'. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "labels.h"
#include "report.h"
#include "text.h"

struct mf_collapsed {
	FILE *out;
	const struct mf_model *m;
	struct mf_labels l;
	enum mf_metric metric;
	int rooted; /* each line starts with its program */
	struct mf_fold_scratch scratch;
	struct mf_fold_levels levels;
	struct mf_strbuf path; /* the labels so far, each followed by ';' */
};

/* A label as the format allows it: escaped as for a terminal (no newline is left), and ';'
 * (which separates frames) made ':'. */
static void mf_collapsed_clean(const char *in, char *out, size_t size)
{
	mf_text_escape(in, out, size);
	for (char *c = out; *c; c++)
		if (*c == ';')
			*c = ':';
}

/* Adds a label and its separator to the path. */
static int mf_path_push(struct mf_collapsed *c, uint32_t label)
{
	int r = mf_strbuf_add(&c->path, c->l.text[label], c->l.len[label]);
	return r ? r : mf_strbuf_add(&c->path, ";", 1);
}

/* The path so far, without its last ';', and count. */
static void mf_path_line(struct mf_collapsed *c, uint64_t count)
{
	char num[32];
	int n = snprintf(num, sizeof(num), " %" PRIu64 "\n", count);
	fwrite(c->path.s, 1, c->path.len - 1, c->out);
	fwrite(num, 1, (size_t)n, c->out);
}

/* The label at level of a sample's path: its program first when rooted. */
static uint32_t mf_collapsed_key(const struct mf_collapsed *c, uint32_t sample, uint64_t view,
				 uint32_t level)
{
	if (c->rooted && level-- == 0)
		return mf_labels_program(&c->l, c->m, sample);
	return level < MF_VIEW_DEPTH(view) ? c->l.of_frame[mf_model_view_frame(c->m, view, level)]
					   : MF_NONE;
}

/* The line of one sample whose path's first level labels are the path so far. */
static int mf_collapsed_line(struct mf_collapsed *c, uint32_t sample, uint64_t view, uint32_t level)
{
	const struct mf_model *m = c->m;
	uint64_t count = m->values[c->metric][sample];
	if (!count)
		return 0;
	size_t keep = c->path.len;
	int r = 0;
	if (c->rooted && level == 0)
		r = mf_path_push(c, mf_labels_program(&c->l, m, sample));
	for (uint32_t k = level ? level - (uint32_t)c->rooted : 0; k < MF_VIEW_DEPTH(view) && !r;
	     k++)
		r = mf_path_push(c, c->l.of_frame[mf_model_view_frame(m, view, k)]);
	if (!r && c->path.len)
		mf_path_line(c, count);
	c->path.len = keep;
	return r;
}

/* The stacks items[0..n) share the path so far; those that end there make its line. */
static int mf_collapsed_level(struct mf_collapsed *c, uint32_t *items, uint64_t *views,
			      uint32_t *keys, size_t n, uint32_t level, const uint64_t *sum)
{
	const struct mf_model *m = c->m;
	if (n == 1)
		return mf_collapsed_line(c, items[0], views[0], level);
	for (size_t i = 0; i < n; i++)
		keys[i] = mf_collapsed_key(c, items[i], views[i], level);
	struct mf_fold *f = &c->levels.v[level];
	int r = mf_fold_group(f, &c->scratch, items, views, keys, n, m->values, sum);
	if (r)
		return r;
	uint64_t ended = f->left_value[c->metric]; /* (the stacks that end here) */
	if (ended && c->path.len)
		mf_path_line(c, ended);
	mf_fold_sort_keys(f, c->l.rank);
	for (size_t g = 0; g < f->count && !r; g++) {
		const struct mf_group *grp = &f->groups[g];
		size_t keep = c->path.len;
		r = mf_path_push(c, grp->key);
		if (!r)
			r = mf_collapsed_level(c, items + grp->first, views + grp->first,
					       keys + grp->first, grp->count, level + 1,
					       grp->value);
		c->path.len = keep;
	}
	return r;
}

int mf_report_collapsed(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	struct mf_collapsed c = {.out = out, .m = m, .metric = o->metric};
	size_t n = m->nsamples;
	uint32_t *items = malloc((n ? n : 1) * sizeof(*items));
	uint32_t *keys = malloc((n ? n : 1) * sizeof(*keys));
	uint64_t *views = malloc((n ? n : 1) * sizeof(*views));
	int r = items && keys && views ? 0 : -ENOMEM;
	if (!r)
		r = mf_labels_build(&c.l, m, o->lines ? MF_LABEL_LINE : MF_LABEL_FUNCTION,
				    o->full_names, mf_collapsed_clean);
	if (!r)
		r = mf_labels_rank(&c.l);
	c.rooted = !r && mf_labels_rooted(&c.l, o->merge_processes);
	if (!r) /* a level past the deepest stack's end, and one for the process */
		r = mf_fold_levels_init(&c.levels, m->max_depth + 2);
	if (!r) {
		for (size_t i = 0; i < n; i++) {
			items[i] = (uint32_t)i;
			views[i] = mf_model_view(m, (uint32_t)i);
		}
		r = mf_collapsed_level(&c, items, views, keys, n, 0, NULL);
	}
	mf_labels_free(&c.l);
	mf_fold_scratch_free(&c.scratch);
	mf_fold_levels_free(&c.levels);
	free(c.path.s);
	free(keys);
	free(views);
	free(items);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
