/* Reports of whole stacks (over all threads and processes), each stack above the threshold
 * (by the sort key) a line with its counts and innermost frames: --histogram, then its size
 * histogram, a line per bucket that requests fell in, its bar scaled to the stack's largest
 * bucket; --leaks, only the stacks with blocks live at the end, the most bytes first. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "report.h"
#include "text.h"

#define MF_BAR_WIDTH   40
#define MF_STACK_SHOWN 4 /* frames named per stack, innermost first */

static const uint64_t *mf_hist_sort_value;
static int mf_hist_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t vx = mf_hist_sort_value[x], vy = mf_hist_sort_value[y];
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A bucket's range: "0 B" (bucket 0), else "[2^(b-1), 2^b)" in the largest exact unit. */
static void mf_bucket_text(char *buf, size_t size, uint32_t b)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"};
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

static void mf_stack_line(FILE *out, const struct mf_model *m, const uint64_t value[MF_METRICS],
			  uint64_t total, enum mf_metric metric, const char *text, int len)
{
	char b[32], temp[16], leaked[96] = "";
	mf_text_bytes(b, sizeof(b), value[MF_METRIC_BYTES]);
	mf_text_temporary(temp, sizeof(temp), value[MF_METRIC_TEMPORARY], value[MF_METRIC_CALLS]);
	if (m->has_lifetimes)
		mf_text_life(leaked, sizeof(leaked), value[MF_METRIC_LEAKED_BLOCKS],
			     value[MF_METRIC_LEAKED], value[MF_METRIC_PEAK_BLOCKS],
			     value[MF_METRIC_PEAK]);
	fprintf(out, "%12" PRIu64 " %6.2f%% %11s%s%s  %.*s\n", value[MF_METRIC_CALLS],
		mf_text_pct(value[metric], total), b, temp, leaked, len, text);
}

/* The stack's buckets (sizes[0..MF_SIZE_BUCKETS)) as bars, against its calls. */
static void mf_bars(FILE *out, const uint64_t *sizes, uint64_t calls)
{
	uint64_t most = 0;
	for (uint32_t k = 0; k < MF_SIZE_BUCKETS; k++)
		most = sizes[k] > most ? sizes[k] : most;
	char bar[MF_BAR_WIDTH + 1], range[48];
	for (uint32_t k = 0; k < MF_SIZE_BUCKETS; k++) {
		if (!sizes[k])
			continue;
		size_t w = (size_t)((double)sizes[k] * MF_BAR_WIDTH / (double)most + 0.5);
		w = w ? w : 1;
		memset(bar, '#', w);
		bar[w] = 0;
		mf_bucket_text(range, sizeof(range), k);
		fprintf(out, "%34s  %-*s %" PRIu64 " (%.1f%%)\n", range, MF_BAR_WIDTH, bar, sizes[k],
			mf_text_pct(sizes[k], calls));
	}
}

/* The stacks by o->metric; with leaks, only those with blocks live at the end. */
static int mf_stacks_report(FILE *out, const struct mf_model *m,
			    const struct mf_report_options *o, int leaks)
{
	size_t n = m->nstacks;
	uint64_t *value[MF_METRICS] = {0};
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	/* the size cells of each stack: cells[first[s] .. first[s + 1]) */
	size_t *first = calloc(n + 2, sizeof(*first));
	uint32_t *cells = malloc((m->nsizes ? m->nsizes : 1) * sizeof(*cells));
	struct mf_labels l = {0};
	struct mf_strbuf text = {0};
	int r = order && first && cells ? 0 : -ENOMEM;
	for (int k = 0; !r && k < MF_METRICS; k++)
		if (!(value[k] = calloc(n ? n : 1, sizeof(*value[k]))))
			r = -ENOMEM;
	if (!r)
		r = mf_labels_build(&l, m, MF_LABEL_LINE, o->full_names, mf_text_clean);
	if (!r) {
		int flag = 0;
		for (size_t i = 0; i < m->nsamples; i++)
			for (int k = 0; k < MF_METRICS; k++) {
				uint64_t *v = &value[k][m->samples[i].stack];
				*v = mf_sat_add(*v, m->values[k][i], &flag);
			}
		for (size_t c = 0; c < m->nsizes; c++)
			first[m->samples[m->sizes[c].sample].stack + 2]++;
		for (size_t s = 0; s < n; s++)
			first[s + 2] += first[s + 1];
		for (size_t c = 0; c < m->nsizes; c++)
			cells[first[m->samples[m->sizes[c].sample].stack + 1]++] = (uint32_t)c;
		for (size_t s = 0; s < n; s++)
			order[s] = (uint32_t)s;
		mf_hist_sort_value = value[o->metric];
		qsort(order, n, sizeof(*order), mf_hist_cmp);
		uint64_t total = mf_model_total(m, o->metric, NULL);
		if (leaks)
			fprintf(out,
				"\nStacks with blocks not freed at the end (leaked), by %s; stacks "
				"below %.2g%% are folded (--threshold)\n\n",
				mf_metric_info[o->metric].plural, o->threshold);
		else
			fprintf(out,
				"\nSize histograms of the stacks, by %s; stacks below %.2g%% are "
				"folded (--threshold)\n\n",
				mf_metric_info[o->metric].plural, o->threshold);
		fprintf(out, "%12s %7s %11s %7s%s  %s\n", "calls", "%", "bytes", "temp",
			m->has_lifetimes ? MF_TEXT_LIFE_HEADING : "",
			leaks ? "stack (allocation <- caller)"
			      : "stack (allocation <- caller), then its request sizes");
		uint64_t folded[MF_METRICS] = {0};
		size_t nfolded = 0;
		for (size_t i = 0; !r && i < n; i++) {
			uint32_t s = order[i];
			uint64_t v[MF_METRICS];
			for (int k = 0; k < MF_METRICS; k++)
				v[k] = value[k][s];
			if (!v[o->metric] || (leaks && !v[MF_METRIC_LEAKED_BLOCKS]))
				continue;
			if (mf_text_pct(v[o->metric], total) < o->threshold) {
				for (int k = 0; k < MF_METRICS; k++)
					folded[k] = mf_sat_add(folded[k], v[k], &flag);
				nfolded++;
				continue;
			}
			if ((r = mf_stack_text(&text, m, &l, s)))
				break;
			mf_stack_line(out, m, v, total, o->metric, text.s, (int)text.len);
			if (leaks)
				continue;
			uint64_t sizes[MF_SIZE_BUCKETS] = {0};
			for (size_t c = first[s]; c < first[s + 1]; c++) {
				const struct mf_size_cell *cell = &m->sizes[cells[c]];
				sizes[cell->bucket] = mf_sat_add(sizes[cell->bucket], cell->count, &flag);
			}
			mf_bars(out, sizes, v[MF_METRIC_CALLS]);
		}
		if (!r && nfolded) {
			char more[128];
			int len = snprintf(more, sizeof(more), "(%zu more stack%s below %.2g%%)",
					   nfolded, nfolded == 1 ? "" : "s", o->threshold);
			mf_stack_line(out, m, folded, total, o->metric, more, len);
		}
	}
	mf_labels_free(&l);
	free(text.s);
	for (int k = 0; k < MF_METRICS; k++)
		free(value[k]);
	free(cells);
	free(first);
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
