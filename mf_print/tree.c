/* The readable reports: a summary, the call tree (callee-rooted by default: the allocation
 * function, then who called it), and the per-thread table. Paths below the threshold are
 * folded into one line that says how much they hold. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#undef uthash_fatal
#define uthash_fatal(msg) return -ENOMEM
#include <uthash.h>

#include "report.h"

struct mf_tnode {
	UT_hash_handle hh;
	uint32_t label;
	uint64_t calls, bytes;
	struct mf_tnode *children;
};

static void mf_human_bytes(char *buf, size_t size, uint64_t b)
{
	const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)b;
	int u = 0;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%" PRIu64 " B", b);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
}

static double mf_pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

int mf_report_summary(FILE *out, const struct mf_stackset *set, const struct mf_report_options *o)
{
	char bytes[32];
	mf_human_bytes(bytes, sizeof(bytes), set->bytes);
	fprintf(out,
		"malloc_freq: %s%" PRIu64
		" calls, %s requested; %zu thread%s in %zu file%s from %zu director%s\n",
		set->estimated ? "~" : "", set->calls, bytes, set->nthreads,
		set->nthreads == 1 ? "" : "s", o->files, o->files == 1 ? "" : "s", o->dirs,
		o->dirs == 1 ? "y" : "ies");
	fprintf(out, "  by function:");
	const char *sep = " ";
	for (int e = 0; e < MF_ENTRY_COUNT; e++) {
		if (!set->entry_calls[e])
			continue;
		fprintf(out, "%s%s %" PRIu64 " (%.1f%%)", sep, mf_entry_names[e],
			set->entry_calls[e], mf_pct(set->entry_calls[e], set->calls));
		sep = ", ";
	}
	fprintf(out, "%s\n", set->calls ? "" : " no calls recorded");
	if (set->estimated)
		fprintf(out,
			"  estimates: some files were sampled (MALLOC_FREQ_SAMPLE); their counts "
			"are scaled by the sampling rate\n");
	if (set->incomplete)
		fprintf(out,
			"  %zu file%s not finalized: the process was killed, crashed, exec'd or "
			"called _exit while %s ran; everything recorded until then is included\n",
			set->incomplete, set->incomplete == 1 ? "" : "s",
			set->incomplete == 1 ? "its thread" : "their threads");
	if (set->lost)
		fprintf(out,
			"  %" PRIu64 " of %" PRIu64
			" calls lost: a profile file could not grow (disk "
			"full, or a file size limit); the rest are in the report\n",
			set->lost, set->seen);
	if (set->nested)
		fprintf(out,
			"  %" PRIu64 " calls arrived while the profiler was recording in the same "
			"thread (signal handlers): counted, not attributed to a stack\n",
			set->nested);
	return ferror(out) ? -EIO : 0;
}

static int mf_tnode_child(struct mf_tnode *parent, uint32_t label, struct mf_tnode **out)
{
	struct mf_tnode *c;
	HASH_FIND(hh, parent->children, &label, sizeof(label), c);
	if (!c) {
		if (!(c = calloc(1, sizeof(*c))))
			return -ENOMEM;
		c->label = label;
		HASH_ADD(hh, parent->children, label, sizeof(label), c);
	}
	*out = c;
	return 0;
}

static void mf_tnode_free(struct mf_tnode *n)
{
	struct mf_tnode *c, *tmp;
	HASH_ITER (hh, n->children, c, tmp) {
		HASH_DEL(n->children, c);
		mf_tnode_free(c);
		free(c);
	}
}

struct mf_tree_print {
	FILE *out;
	const struct mf_stackset *set;
	const struct mf_report_options *o;
	uint64_t total;
	char *prefix; /* the tree's left margin, grown as it deepens */
	size_t prefix_len, prefix_cap;
};

static uint64_t mf_key(const struct mf_tree_print *tp, const struct mf_tnode *n)
{
	return tp->o->by_bytes ? n->bytes : n->calls;
}

static const struct mf_tree_print *mf_sort_ctx;
static int mf_tnode_cmp(const void *a, const void *b)
{
	const struct mf_tnode *x = *(const struct mf_tnode *const *)a;
	const struct mf_tnode *y = *(const struct mf_tnode *const *)b;
	uint64_t kx = mf_key(mf_sort_ctx, x), ky = mf_key(mf_sort_ctx, y);
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(mf_sort_ctx->set->labels[x->label], mf_sort_ctx->set->labels[y->label]);
}

static void mf_tree_line(struct mf_tree_print *tp, uint64_t calls, uint64_t bytes,
			 const char *branch, const char *text)
{
	char b[32];
	mf_human_bytes(b, sizeof(b), bytes);
	fprintf(tp->out, "%12" PRIu64 " %6.2f%% %11s  %.*s%s%s\n", calls,
		mf_pct(tp->o->by_bytes ? bytes : calls, tp->total), b, (int)tp->prefix_len,
		tp->prefix, branch, text);
}

static int mf_prefix_push(struct mf_tree_print *tp, const char *s)
{
	size_t n = strlen(s);
	if (tp->prefix_len + n + 1 > tp->prefix_cap) {
		size_t cap = (tp->prefix_cap + n + 1) * 2;
		char *p = realloc(tp->prefix, cap);
		if (!p)
			return -ENOMEM;
		tp->prefix = p;
		tp->prefix_cap = cap;
	}
	memcpy(tp->prefix + tp->prefix_len, s, n);
	tp->prefix_len += n;
	return 0;
}

static int mf_tree_children(struct mf_tree_print *tp, const struct mf_tnode *n)
{
	size_t count = HASH_COUNT(n->children), shown = 0, i = 0;
	if (!count)
		return 0;
	struct mf_tnode **v = malloc(count * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (struct mf_tnode *c = n->children; c; c = c->hh.next)
		v[i++] = c;
	mf_sort_ctx = tp;
	qsort(v, count, sizeof(*v), mf_tnode_cmp);
	uint64_t folded_calls = 0, folded_bytes = 0;
	size_t folded = 0;
	for (i = 0; i < count; i++) {
		if (mf_pct(mf_key(tp, v[i]), tp->total) < tp->o->threshold) {
			folded_calls += v[i]->calls;
			folded_bytes += v[i]->bytes;
			folded++;
		} else {
			shown++;
		}
	}
	int r = 0, top = n->label == UINT32_MAX;
	for (i = 0; i < shown && !r; i++) {
		int last = i + 1 == shown && !folded;
		mf_tree_line(tp, v[i]->calls, v[i]->bytes,
			     top    ? ""
			     : last ? "`- "
				    : "|- ",
			     tp->set->labels[v[i]->label]);
		size_t keep = tp->prefix_len;
		r = mf_prefix_push(tp, top ? "" : last ? "   " : "|  ");
		if (!r)
			r = mf_tree_children(tp, v[i]);
		tp->prefix_len = keep;
	}
	if (!r && folded) {
		char text[128];
		snprintf(text, sizeof(text), "(%zu more path%s below %.2g%%)", folded,
			 folded == 1 ? "" : "s", tp->o->threshold);
		mf_tree_line(tp, folded_calls, folded_bytes, top ? "" : "`- ", text);
	}
	free(v);
	return r;
}

int mf_report_tree(FILE *out, const struct mf_stackset *set, const struct mf_report_options *o)
{
	struct mf_tnode root = {.label = UINT32_MAX};
	int r = 0;
	for (size_t i = 0; i < set->count && !r; i++) {
		const struct mf_stack *s = &set->stacks[i];
		struct mf_tnode *n = &root;
		uint32_t len = s->depth + 1;
		for (uint32_t k = 0; k < len && !r; k++) {
			/* callee-first: entry, innermost ... outermost; caller-first: the reverse
			 */
			uint32_t label;
			if (o->caller_first)
				label = k < s->depth ? s->labels[k] : set->entry_label[s->entry];
			else
				label =
				    k == 0 ? set->entry_label[s->entry] : s->labels[s->depth - k];
			if (!(r = mf_tnode_child(n, label, &n))) {
				n->calls += s->calls;
				n->bytes += s->bytes;
			}
		}
	}
	struct mf_tree_print tp = {.out = out, .set = set, .o = o};
	tp.total = o->by_bytes ? set->bytes : set->calls;
	if (!r) {
		fprintf(out, "\n%s; paths below %.2g%% of all %s are folded (--threshold)\n\n",
			o->caller_first ? "Outermost callers first, the allocation function last"
					: "The allocation function first, then who called it",
			o->threshold, o->by_bytes ? "bytes" : "calls");
		fprintf(out, "%12s %7s %11s  %s\n", "calls", "%", "bytes",
			o->caller_first ? "call stack (caller -> allocation)"
					: "call stack (allocation <- caller)");
		r = mf_tree_children(&tp, &root);
	}
	free(tp.prefix);
	mf_tnode_free(&root);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}

/* ---- threads ------------------------------------------------------------------------------ */

#define MF_THREAD_COLUMNS 8

struct mf_site {
	UT_hash_handle hh;
	uint32_t label;
	uint64_t total;
	uint64_t cols[MF_THREAD_COLUMNS + 1]; /* last: all other threads */
};

static const struct mf_stackset *mf_thread_sort_set;
static int mf_thread_cmp(const void *a, const void *b)
{
	const struct mf_thread_info *x = &mf_thread_sort_set->threads[*(const size_t *)a];
	const struct mf_thread_info *y = &mf_thread_sort_set->threads[*(const size_t *)b];
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->profile->header.tid < y->profile->header.tid ? -1 : 1;
}

static int mf_site_cmp(const void *a, const void *b)
{
	const struct mf_site *x = *(const struct mf_site *const *)a;
	const struct mf_site *y = *(const struct mf_site *const *)b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->label < y->label ? -1 : x->label > y->label;
}

int mf_report_threads(FILE *out, const struct mf_stackset *set, const struct mf_report_options *o)
{
	size_t n = set->nthreads, ncols = n < MF_THREAD_COLUMNS ? n : MF_THREAD_COLUMNS;
	int others = n > MF_THREAD_COLUMNS;
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	size_t *column = malloc((n ? n : 1) * sizeof(*column));
	struct mf_site *sites = NULL, *s, *tmp;
	int r = order && column ? 0 : -ENOMEM;
	for (size_t i = 0; !r && i < n; i++)
		order[i] = i;
	if (!r) {
		mf_thread_sort_set = set;
		qsort(order, n, sizeof(*order), mf_thread_cmp);
		for (size_t i = 0; i < n; i++)
			column[order[i]] = i < ncols ? i : MF_THREAD_COLUMNS;
	}
	for (size_t i = 0; !r && i < set->count; i++) {
		const struct mf_stack *st = &set->stacks[i];
		uint32_t label = mf_stack_site(set, st);
		HASH_FIND(hh, sites, &label, sizeof(label), s);
		if (!s) {
			if (!(s = calloc(1, sizeof(*s)))) {
				r = -ENOMEM;
				break;
			}
			s->label = label;
			HASH_ADD(hh, sites, label, sizeof(label), s);
		}
		uint64_t v = o->by_bytes ? st->bytes : st->calls;
		s->total += v;
		s->cols[column[st->thread]] += v;
	}
	size_t count = HASH_COUNT(sites), k = 0;
	struct mf_site **v = r ? NULL : malloc((count ? count : 1) * sizeof(*v));
	if (!r && !v)
		r = -ENOMEM;
	if (!r) {
		for (s = sites; s; s = s->hh.next)
			v[k++] = s;
		qsort(v, count, sizeof(*v), mf_site_cmp);
		uint64_t total = o->by_bytes ? set->bytes : set->calls;
		fprintf(out,
			"\n%s per thread, by the function that called the allocator; sites below "
			"%.2g%% are folded (--threshold)\n\n",
			o->by_bytes ? "Bytes" : "Calls", o->threshold);
		fprintf(out, "%12s", "total");
		for (size_t c = 0; c < ncols; c++)
			fprintf(out, " %12" PRIu64, set->threads[order[c]].profile->header.tid);
		if (others)
			fprintf(out, " %12s", "others");
		fprintf(out, "  %s\n%12s", "tid", "");
		for (size_t c = 0; c < ncols; c++)
			fprintf(out, " %12.12s",
				set->threads[order[c]].profile->header.thread_name);
		if (others)
			fprintf(out, " %9zu th", n - ncols);
		fprintf(out, "  %s\n", "thread name / allocation site");
		uint64_t fold_total = 0, fold_cols[MF_THREAD_COLUMNS + 1] = {0};
		size_t folded = 0;
		for (size_t i = 0; i < count; i++) {
			if (mf_pct(v[i]->total, total) < o->threshold) {
				folded++;
				fold_total += v[i]->total;
				for (size_t c = 0; c <= MF_THREAD_COLUMNS; c++)
					fold_cols[c] += v[i]->cols[c];
				continue;
			}
			fprintf(out, "%12" PRIu64, v[i]->total);
			for (size_t c = 0; c < ncols; c++)
				fprintf(out, " %12" PRIu64, v[i]->cols[c]);
			if (others)
				fprintf(out, " %12" PRIu64, v[i]->cols[MF_THREAD_COLUMNS]);
			fprintf(out, "  %s\n", set->labels[v[i]->label]);
		}
		if (folded) {
			fprintf(out, "%12" PRIu64, fold_total);
			for (size_t c = 0; c < ncols; c++)
				fprintf(out, " %12" PRIu64, fold_cols[c]);
			if (others)
				fprintf(out, " %12" PRIu64, fold_cols[MF_THREAD_COLUMNS]);
			fprintf(out, "  (%zu more site%s below %.2g%%)\n", folded,
				folded == 1 ? "" : "s", o->threshold);
		}
	}
	free(v);
	HASH_ITER (hh, sites, s, tmp) {
		HASH_DEL(sites, s);
		free(s);
	}
	free(order);
	free(column);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
