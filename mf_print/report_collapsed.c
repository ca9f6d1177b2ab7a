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
	struct mf_fold_scratch scratch;
	struct mf_strbuf path; /* the labels so far, each followed by ';' */
};

static void mf_collapsed_clean(char *text)
{
	for (char *c = text; *c; c++)
		if (*c == ';' || *c == '\n')
			*c = ':';
}

/* Adds a label and its separator to the path. */
static int mf_path_push(struct mf_collapsed *c, const char *text)
{
	int r = mf_strbuf_add(&c->path, text, strlen(text));
	return r ? r : mf_strbuf_add(&c->path, ";", 1);
}

/* The stacks items[0..n) share the path so far; those that end there make its line. */
static int mf_collapsed_level(struct mf_collapsed *c, uint32_t *items, uint32_t *keys, size_t n,
			      uint32_t level)
{
	const struct mf_model *m = c->m;
	for (size_t i = 0; i < n; i++) {
		const struct mf_stack *s = &m->stacks[m->samples[items[i]].stack];
		keys[i] =
		    level < s->depth
			? c->l.of_frame[mf_model_stack_frames(m, m->samples[items[i]].stack)[level]]
			: MF_NONE;
	}
	struct mf_fold f = {0};
	int r = mf_fold_group(&f, &c->scratch, items, keys, n, m->values);
	if (r)
		return r;
	size_t grouped = f.count ? f.groups[f.count - 1].first + f.groups[f.count - 1].count : 0;
	uint64_t ended = 0;
	int flag = 0;
	for (size_t i = grouped; i < n; i++)
		ended = mf_sat_add(ended, m->values[c->metric][items[i]], &flag);
	if (ended && c->path.len)
		fprintf(c->out, "%.*s %" PRIu64 "\n", (int)c->path.len - 1, c->path.s, ended);
	mf_fold_sort_keys(&f, c->l.rank);
	for (size_t g = 0; g < f.count && !r; g++) {
		size_t keep = c->path.len;
		r = mf_path_push(c, c->l.text[f.groups[g].key]);
		if (!r)
			r = mf_collapsed_level(c, items + f.groups[g].first,
					       keys + f.groups[g].first, f.groups[g].count,
					       level + 1);
		c->path.len = keep;
	}
	mf_fold_free(&f);
	return r;
}

int mf_report_collapsed(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	struct mf_collapsed c = {.out = out, .m = m, .metric = o->metric};
	size_t n = m->nsamples;
	uint32_t *items = malloc((n ? n : 1) * sizeof(*items));
	uint32_t *keys = malloc((n ? n : 1) * sizeof(*keys));
	int r = items && keys ? 0 : -ENOMEM;
	if (!r)
		r = mf_labels_build(&c.l, m, o->lines ? MF_LABEL_LINE : MF_LABEL_FUNCTION,
				    o->full_names, mf_collapsed_clean);
	if (!r)
		r = mf_labels_rank(&c.l);
	if (!r) {
		for (size_t i = 0; i < n; i++)
			items[i] = (uint32_t)i;
		r = mf_collapsed_level(&c, items, keys, n, 0);
	}
	mf_labels_free(&c.l);
	mf_fold_scratch_free(&c.scratch);
	free(c.path.s);
	free(keys);
	free(items);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
