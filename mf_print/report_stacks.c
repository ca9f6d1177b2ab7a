/* Reports of whole stacks (over all threads and processes), each stack above the threshold
 * (by the sort key) a line with its counts and innermost frames: --histogram, then its size
 * histogram, a line per bucket that requests fell in, its bar scaled to the stack's largest
 * bucket; --leaks, only the stacks with blocks live at the end, the most bytes first. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "labels.h"
#include "report.h"
#include "text.h"

#define MF_BAR_WIDTH   40
#define MF_STACK_SHOWN 4 /* frames named per stack, innermost first */

/* Stacks by a value, largest first, where it ties by a second (NULL: none), then in order. */
static const uint64_t *mf_hist_sort_value, *mf_hist_sort_tie;
static int mf_hist_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t vx = mf_hist_sort_value[x], vy = mf_hist_sort_value[y];
	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (mf_hist_sort_tie && mf_hist_sort_tie[x] != mf_hist_sort_tie[y])
		return mf_hist_sort_tie[x] > mf_hist_sort_tie[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A bucket's range: "0 B" (bucket 0), else "[2^(b-1), 2^b)" in the largest exact unit. */
static void mf_bucket_text(char *buf, size_t size, int bucket)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"};
	unsigned b = (unsigned)bucket;
	if (b == 0) {
		snprintf(buf, size, "0 B");
		return;
	}
	unsigned lo = b - 1, hi = b;
	snprintf(buf, size, "[%llu %s, %llu %s)", 1ull << lo % 10, unit[lo / 10], 1ull << hi % 10,
		 unit[hi / 10]);
}

/* The stack's innermost frames, "malloc <- f file:line <- g ...", into b. */
static int mf_stack_text(struct mf_strbuf *b, const struct mf_model *m, const struct mf_labels *l,
			 uint32_t stack)
{
	const struct mf_stack *s = &m->stacks[stack];
	const uint32_t *frames = mf_model_stack_frames(m, stack);
	b->len = 0;
	int r = 0;
	for (uint32_t k = 0; !r && k < s->depth && k <= MF_STACK_SHOWN; k++) {
		uint32_t label = l->of_frame[frames[s->depth - 1 - k]];
		if (k)
			r = mf_strbuf_add(b, " <- ", 4);
		if (!r)
			r = mf_strbuf_add(b, l->text[label], l->len[label]);
	}
	if (!r && s->depth > MF_STACK_SHOWN + 1)
		r = mf_strbuf_add(b, " <- ...", 7);
	return r;
}

/* A stack's line; median: its median lifetime's bucket (-1: none). */
static void mf_stack_line(FILE *out, const struct mf_model *m, const uint64_t value[MF_METRICS],
			  uint64_t total, enum mf_metric metric, const char *text, int len,
			  int median)
{
	char b[32], temp[16], shortl[16] = "", leaked[96] = "", most[64] = "";
	mf_text_bytes(b, sizeof(b), value[MF_METRIC_BYTES]);
	mf_text_temporary(temp, sizeof(temp), value[MF_METRIC_TEMPORARY], value[MF_METRIC_CALLS]);
	if (mf_model_holds(m, MF_METRIC_SHORT))
		mf_text_temporary(shortl, sizeof(shortl), value[MF_METRIC_SHORT],
				  value[MF_METRIC_CALLS]);
	if (m->has_lifetimes)
		mf_text_life(leaked, sizeof(leaked), value[MF_METRIC_LEAKED_BLOCKS],
			     value[MF_METRIC_LEAKED], value[MF_METRIC_PEAK_BLOCKS],
			     value[MF_METRIC_PEAK], median);
	if (mf_model_holds(m, MF_METRIC_MAX_LIVE))
		mf_text_most(most, sizeof(most), value[MF_METRIC_MAX_BLOCKS],
			     value[MF_METRIC_MAX_LIVE], value[MF_METRIC_FREED],
			     value[MF_METRIC_LIFETIME]);
	fprintf(out, "%12" PRIu64 " %6.2f%% %11s%s%s%s%s  %.*s\n", value[MF_METRIC_CALLS],
		mf_text_pct(value[metric], total), b, temp, shortl, leaked, most, len, text);
}

/* A histogram (count[0..buckets)) as bars, each against of; bucket k's range by text. */
static void mf_bars(FILE *out, const uint64_t *count, uint32_t buckets, uint64_t of,
		    void (*text)(char *buf, size_t size, int bucket))
{
	uint64_t most = 0;
	for (uint32_t k = 0; k < buckets; k++)
		most = count[k] > most ? count[k] : most;
	char bar[MF_BAR_WIDTH + 1], range[64];
	for (uint32_t k = 0; k < buckets; k++) {
		if (!count[k])
			continue;
		size_t w = (size_t)((double)count[k] * MF_BAR_WIDTH / (double)most + 0.5);
		w = w ? w : 1;
		memset(bar, '#', w);
		bar[w] = 0;
		text(range, sizeof(range), (int)k);
		fprintf(out, "%34s  %-*s %" PRIu64 " (%.1f%%)\n", range, MF_BAR_WIDTH, bar,
			count[k], mf_text_pct(count[k], of));
	}
}

/* A stack's histogram from its cells, into count[0..buckets). */
static void mf_stack_hist(const struct mf_size_cell *cells, const size_t *first,
			  const uint32_t *cell, uint32_t s, uint64_t *count, uint32_t buckets)
{
	int flag = 0;
	memset(count, 0, buckets * sizeof(*count));
	for (size_t c = first[s]; c < first[s + 1]; c++) {
		const struct mf_size_cell *x = &cells[cell[c]];
		if (x->bucket < buckets)
			count[x->bucket] = mf_sat_add(count[x->bucket], x->count, &flag);
	}
}

/* The median's bucket of a histogram, or -1. */
static int mf_hist_median(const uint64_t *count, uint32_t buckets)
{
	uint64_t total = 0, seen = 0;
	for (uint32_t k = 0; k < buckets; k++)
		total += count[k];
	for (uint32_t k = 0; total && k < buckets; k++)
		if ((seen += count[k]) * 2 >= total)
			return (int)k;
	return -1;
}

/* The stacks by o->metric; with leaks, only those with blocks live at the end. */
static int mf_stacks_report(FILE *out, const struct mf_model *m, const struct mf_report_options *o,
			    int leaks)
{
	size_t n = m->nstacks;
	uint64_t *value[MF_METRICS] = {0};
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	size_t *first = NULL, *life_first = NULL; /* the size and lifetime cells by stack */
	uint32_t *cells = NULL, *life_cells = NULL;
	struct mf_labels l = {0};
	struct mf_strbuf text = {0};
	int r = order ? 0 : -ENOMEM;
	if (!r)
		r = mf_model_cells_by(m, m->sizes, m->nsizes, 1, &first, &cells);
	if (!r)
		r = mf_model_cells_by(m, m->lives, m->nlives, 1, &life_first, &life_cells);
	int flag = 0;
	if (!r)
		r = mf_fold_sums(m, MF_FOLD_BY_STACK, value, &flag);
	if (!r)
		r = mf_labels_build(&l, m, MF_LABEL_LINE, o->full_names, mf_text_clean);
	if (!r) {
		for (size_t s = 0; s < n; s++)
			order[s] = (uint32_t)s;
		mf_hist_sort_value = value[o->metric];
		/* (leaked malloc(0) blocks hold no bytes: where bytes tie, the more blocks first)
		 */
		mf_hist_sort_tie = leaks ? value[MF_METRIC_LEAKED_BLOCKS] : NULL;
		qsort(order, n, sizeof(*order), mf_hist_cmp);
		uint64_t total = mf_model_total(m, o->metric, NULL);
		fprintf(out,
			leaks ? "\nStacks with blocks not freed at the end (leaked), by %s"
			      : "\nSize histograms of the stacks, by %s",
			mf_metric_info[o->metric].plural);
		if (o->threshold > 0)
			fprintf(out, "; stacks below %g%% are folded (--threshold)", o->threshold);
		fputs("\n\n", out);
		fprintf(out, "%12s %7s %11s %7s%s%s%s  %s\n", "calls", "%", "bytes", "temp",
			mf_model_holds(m, MF_METRIC_SHORT) ? "   short" : "",
			m->has_lifetimes ? MF_TEXT_LIFE_HEADING : "",
			mf_model_holds(m, MF_METRIC_MAX_LIVE) ? MF_TEXT_MOST_HEADING : "",
			leaks ? "stack (allocation <- caller)"
			      : "stack (allocation <- caller), then its request sizes");
		uint64_t folded[MF_METRICS] = {0};
		size_t nfolded = 0;
		for (size_t i = 0; !r && i < n; i++) {
			uint32_t s = order[i];
			uint64_t v[MF_METRICS];
			mf_fold_row(v, value, s);
			if (leaks ? !v[MF_METRIC_LEAKED_BLOCKS] : !v[o->metric])
				continue; /* (a leaking stack is never left out, whatever its bytes)
					   */
			if (mf_text_pct(v[o->metric], total) < o->threshold) {
				mf_fold_add_row(folded, v, &flag);
				nfolded++;
				continue;
			}
			if ((r = mf_stack_text(&text, m, &l, s)))
				break;
			uint64_t lives[MF_LIFETIME_BUCKETS], freed = 0;
			mf_stack_hist(m->lives, life_first, life_cells, s, lives,
				      MF_LIFETIME_BUCKETS);
			mf_stack_line(out, m, v, total, o->metric, text.s, (int)text.len,
				      mf_hist_median(lives, MF_LIFETIME_BUCKETS));
			if (leaks)
				continue;
			uint64_t sizes[MF_SIZE_BUCKETS];
			mf_stack_hist(m->sizes, first, cells, s, sizes, MF_SIZE_BUCKETS);
			mf_bars(out, sizes, MF_SIZE_BUCKETS, v[MF_METRIC_CALLS], mf_bucket_text);
			for (uint32_t k = 0; k < MF_LIFETIME_BUCKETS; k++)
				freed += lives[k];
			if (freed) {
				fprintf(out, "%34s\n", "lifetimes of its freed blocks:");
				mf_bars(out, lives, MF_LIFETIME_BUCKETS, freed,
					mf_text_lifetime_bucket);
			}
		}
		if (!r && nfolded) {
			char more[128];
			int len = snprintf(more, sizeof(more), "(%zu more stack%s below %g%%)",
					   nfolded, nfolded == 1 ? "" : "s", o->threshold);
			mf_stack_line(out, m, folded, total, o->metric, more, len, -1);
		}
	}
	mf_labels_free(&l);
	free(text.s);
	for (int k = 0; k < MF_METRICS; k++)
		free(value[k]);
	free(cells);
	free(first);
	free(life_cells);
	free(life_first);
	free(order);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}

int mf_report_histogram(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	return mf_stacks_report(out, m, o, 0);
}

int mf_report_leaks(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	return mf_stacks_report(out, m, o, 1);
}
