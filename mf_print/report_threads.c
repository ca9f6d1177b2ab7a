/* --threads: a table of allocation sites (the function that called the allocator) with a
 * column per thread, the busiest first; the rest summed in one column. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "labels.h"
#include "report.h"
#include "text.h"

#define MF_THREAD_COLUMNS 8
#define MF_COLUMN	  15 /* characters: a pid/tid of two 7-digit numbers */

static const struct mf_model *mf_thread_sort_model;
static const uint64_t *mf_thread_sort_calls;
static int mf_thread_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t cx = mf_thread_sort_calls[x], cy = mf_thread_sort_calls[y];
	if (cx != cy)
		return cx > cy ? -1 : 1;
	uint64_t tx = mf_thread_sort_model->threads[x].tid,
		 ty = mf_thread_sort_model->threads[y].tid;
	return tx < ty ? -1 : tx > ty;
}

/* The site of a sample: the frame that called the allocator (the entry point, if none). */
static uint32_t mf_site(const struct mf_model *m, const struct mf_labels *l, uint32_t sample)
{
	const struct mf_stack *s = &m->stacks[m->samples[sample].stack];
	const uint32_t *frames = mf_model_stack_frames(m, m->samples[sample].stack);
	return l->of_frame[frames[s->depth >= 2 ? s->depth - 2 : s->depth - 1]];
}

/* A column heading: text (escaped, cut to the column) right-aligned. */
static void mf_heading(FILE *out, const char *text)
{
	char e[MF_COLUMN + 1];
	mf_text_escape(text, e, sizeof(e));
	fprintf(out, " %*s", MF_COLUMN, e);
}

/* Each column's thread: pid/tid, its name, and its program when there are several. */
static void mf_threads_header(FILE *out, const struct mf_model *m, const uint32_t *order,
			      size_t ncols, size_t others)
{
	char text[64];
	int programs = 0;
	for (size_t c = 1; c < ncols; c++) {
		const struct mf_thread *t = &m->threads[order[c]], *t0 = &m->threads[order[0]];
		programs |= strcmp(m->processes[t->process].name, m->processes[t0->process].name);
	}
	fprintf(out, "%12s", "total");
	for (size_t c = 0; c < ncols; c++) {
		const struct mf_thread *t = &m->threads[order[c]];
		/* (~: its counts are sampled estimates, as the summary marks them) */
		snprintf(text, sizeof(text), "%s%" PRIu64 "/%" PRIu64,
			 t->sample_rate > 1 ? "~" : "", m->processes[t->process].pid, t->tid);
		mf_heading(out, text);
	}
	if (others)
		fprintf(out, " %*s", MF_COLUMN, "others");
	fprintf(out, "  %s\n%12s", "pid/tid", "");
	for (size_t c = 0; c < ncols; c++)
		mf_heading(out, m->threads[order[c]].name);
	if (others)
		fprintf(out, " %*zu th", MF_COLUMN - 3, others);
	fprintf(out, "  %s\n", programs ? "thread name" : "thread name / allocation site");
	if (!programs)
		return;
	fprintf(out, "%12s", "");
	for (size_t c = 0; c < ncols; c++)
		mf_heading(out, m->processes[m->threads[order[c]].process].name);
	if (others)
		fprintf(out, " %*s", MF_COLUMN, "");
	fprintf(out, "  %s\n", "program / allocation site");
}

static void mf_row(FILE *out, uint64_t total, const uint64_t *cols, size_t ncols, int others,
		   const char *text)
{
	fprintf(out, "%12" PRIu64, total);
	for (size_t c = 0; c < ncols; c++)
		fprintf(out, " %*" PRIu64, MF_COLUMN, cols[c]);
	if (others)
		fprintf(out, " %*" PRIu64, MF_COLUMN, cols[MF_THREAD_COLUMNS]);
	fprintf(out, "  %s\n", text);
}

int mf_report_threads(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	size_t n = m->nthreads, ncols = n < MF_THREAD_COLUMNS ? n : MF_THREAD_COLUMNS;
	size_t ns = m->nsamples;
	int others = n > MF_THREAD_COLUMNS;
	const enum mf_metric metric = o->metric;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	size_t *column = malloc((n ? n : 1) * sizeof(*column));
	uint64_t *sums[MF_METRICS] = {0};
	uint32_t *items = malloc((ns ? ns : 1) * sizeof(*items));
	uint32_t *keys = malloc((ns ? ns : 1) * sizeof(*keys));
	struct mf_labels l = {0};
	struct mf_fold f = {0};
	struct mf_fold_scratch scratch = {0};
	int flag = 0;
	int r = order && column && items && keys ? mf_fold_sums(m, MF_FOLD_BY_THREAD, sums, &flag)
						 : -ENOMEM;
	if (!r)
		r = mf_labels_build(&l, m, MF_LABEL_LINE, o->full_names, mf_text_clean);
	if (!r)
		r = mf_labels_rank(&l);
	if (!r) {
		for (size_t i = 0; i < ns; i++) {
			items[i] = (uint32_t)i;
			keys[i] = mf_site(m, &l, (uint32_t)i);
		}
		for (size_t i = 0; i < n; i++)
			order[i] = (uint32_t)i;
		mf_thread_sort_model = m;
		mf_thread_sort_calls = sums[MF_METRIC_CALLS];
		qsort(order, n, sizeof(*order), mf_thread_cmp);
		for (size_t i = 0; i < n; i++)
			column[order[i]] = i < ncols ? i : MF_THREAD_COLUMNS;
		r = mf_fold_group(&f, &scratch, items, NULL, keys, ns, m->values, NULL);
	}
	if (!r) {
		uint64_t total = mf_model_total(m, metric, NULL);
		mf_fold_sort(&f, metric, total, o->threshold, l.rank);
		const char *what = mf_metric_info[metric].plural;
		fprintf(out, "\n%c%s%s per thread, by the function that called the allocator",
			toupper((unsigned char)what[0]), what + 1,
			metric == MF_METRIC_TIME ? " (ns)" : "");
		if (o->threshold > 0)
			fprintf(out, "; sites below %g%% are folded (--threshold)", o->threshold);
		fputs("\n\n", out);
		mf_threads_header(out, m, order, ncols, n - ncols);
		uint64_t fold_cols[MF_THREAD_COLUMNS + 1] = {0};
		for (size_t g = 0; g < f.count; g++) {
			const struct mf_group *grp = &f.groups[g];
			uint64_t cols[MF_THREAD_COLUMNS + 1] = {0};
			uint64_t *to = g < f.shown ? cols : fold_cols;
			for (uint32_t i = grp->first; i < grp->first + grp->count; i++) {
				size_t c = column[m->samples[items[i]].thread];
				to[c] = mf_sat_add(to[c], m->values[metric][items[i]], &flag);
			}
			if (g < f.shown)
				mf_row(out, grp->value[metric], cols, ncols, others,
				       l.text[grp->key]);
		}
		size_t folded = f.count - f.shown;
		if (folded) {
			char text[128];
			snprintf(text, sizeof(text), "(%zu more site%s below %g%%)", folded,
				 folded == 1 ? "" : "s", o->threshold);
			mf_row(out, f.folded_value[metric], fold_cols, ncols, others, text);
		}
	}
	mf_fold_free(&f);
	mf_fold_scratch_free(&scratch);
	mf_labels_free(&l);
	free(keys);
	free(items);
	for (int k = 0; k < MF_METRICS; k++)
		free(sums[k]);
	free(order);
	free(column);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
