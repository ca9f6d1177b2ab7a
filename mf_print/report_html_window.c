/* --html's windows (report_html_window.h): each state's samples placed on the page's trie by
 * their labels' texts, each row's change from the state before it kept, the rows past the
 * busiest folded. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "report_html_window.h"
#include "text.h"

#define MF_FOLDED_TEXT "(other stacks, folded)"

/* The label of text in l, added as it is (it is already cleaned). */
static int mf_window_label(struct mf_labels *l, const char *text, uint32_t *id)
{
	void (*clean)(const char *, char *, size_t) = l->clean;
	l->clean = NULL;
	int r = mf_labels_add(l, text, id);
	l->clean = clean;
	return r;
}

/* fn_of grown to lines->count, the function of label line set. */
static int mf_window_fn(uint32_t **fn_of, const struct mf_labels *lines, uint32_t line, uint32_t fn)
{
	uint32_t *g = realloc(*fn_of, (lines->count ? lines->count : 1) * sizeof(**fn_of));
	if (!g)
		return -ENOMEM;
	*fn_of = g;
	g[line] = fn;
	return 0;
}

/* The page's label of each of state model sm's frames (fmap) and processes' programs (pmap),
 * their functions set in *fn_of. */
static int mf_window_labels(const struct mf_model *sm, struct mf_labels *lines,
			    struct mf_labels *fns, uint32_t **fn_of, int full_names, uint32_t *fmap,
			    uint32_t *pmap)
{
	struct mf_labels sl = {0}, sf = {0};
	int r = mf_labels_build(&sl, sm, MF_LABEL_LINE, full_names, mf_text_clean);
	if (!r)
		r = mf_labels_build(&sf, sm, MF_LABEL_FUNCTION, full_names, mf_text_clean);
	for (size_t f = 0; f < sm->nframes + sm->nprocesses && !r; f++) {
		int proc = f >= sm->nframes;
		size_t i = proc ? f - sm->nframes : f;
		uint32_t line, fn;
		r = mf_window_label(lines, sl.text[proc ? sl.of_process[i] : sl.of_frame[i]],
				    &line);
		if (!r)
			r = mf_window_label(fns, sf.text[proc ? sf.of_process[i] : sf.of_frame[i]],
					    &fn);
		if (!r)
			r = mf_window_fn(fn_of, lines, line, fn);
		(proc ? pmap : fmap)[i] = line;
	}
	mf_labels_free(&sl);
	mf_labels_free(&sf);
	return r;
}

static const char *mf_window_base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The page's process of sm's process p (by its directory), and the code of sm's thread th: the
 * page's thread of the same file name in it, else 2^31 + that process. */
static uint32_t mf_window_process(const struct mf_model *m, const struct mf_model *sm, uint32_t p)
{
	for (uint32_t i = 0; i < m->nprocesses; i++)
		if (!strcmp(m->processes[i].dir, sm->processes[p].dir))
			return i;
	return MF_NONE;
}

/* (qsort's context: the page's model) */
static const struct mf_model *mf_sort_m;
static int mf_window_thread_cmp(const void *a, const void *b)
{
	const struct mf_thread *x = &mf_sort_m->threads[*(const uint32_t *)a],
			       *y = &mf_sort_m->threads[*(const uint32_t *)b];
	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return strcmp(mf_window_base(x->path), mf_window_base(y->path));
}

/* (by_name: the page's threads in (process, file name) order) */
static uint32_t mf_window_thread(const struct mf_model *m, const uint32_t *by_name, uint32_t proc,
				 const struct mf_thread *th)
{
	size_t lo = 0, hi = m->nthreads;
	while (proc != MF_NONE && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mf_thread *x = &m->threads[by_name[mid]];
		int c = x->process != proc
			    ? (x->process < proc ? -1 : 1)
			    : strcmp(mf_window_base(x->path), mf_window_base(th->path));
		if (!c)
			return by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0x80000000u + (proc == MF_NONE ? 0x7fffffffu : proc);
}

/* Room for row count (rows.count) in w's arrays by row, new rows zeroed. */
static int mf_window_room(struct mf_html_windows *w, size_t count, int nm)
{
	size_t had = w->cap_last;
	uint32_t *p = mf_array_room(w->proc, count, &w->cap_proc, sizeof(*p));
	if (!p)
		return -ENOMEM;
	w->proc = p;
	if (count < w->cap_last / nm)
		return 0;
	size_t cap = had ? had * 2 : 64 * (size_t)nm;
	while (cap / nm <= count)
		cap *= 2;
	uint64_t *l = realloc(w->last, cap * sizeof(*l));
	if (!l)
		return -ENOMEM;
	memset(l + had, 0, (cap - had) * sizeof(*l));
	w->last = l;
	w->cap_last = cap;
	return 0;
}

/* The row of (leaf, code) of process proc, made if new. */
static int mf_window_row(struct mf_html_windows *w, uint32_t leaf, uint32_t code, uint32_t proc,
			 uint32_t *row)
{
	int r = mf_pathtrie_child(&w->rows, leaf, code, row);
	if (!r && *row + 1 == w->rows.count && !(r = mf_window_room(w, *row, w->nmetrics)))
		w->proc[*row] = proc;
	return r;
}

/* State number k (model sm) read into rows: each row of a process in it recorded as its
 * change from its last state. */
static int mf_window_state(struct mf_html_windows *w, const struct mf_model *m, uint32_t k,
			   const struct mf_model *sm, struct mf_pathtrie *t,
			   struct mf_labels *lines, struct mf_labels *fns, uint32_t **fn_of,
			   int rooted, int full_names)
{
	uint32_t *fmap = malloc((sm->nframes + 1) * sizeof(*fmap)),
		 *pmap = malloc((sm->nprocesses + 1) * sizeof(*pmap)),
		 *procs = calloc(sm->nprocesses + 1, sizeof(*procs)),
		 *codes = calloc(sm->nthreads + 1, sizeof(*codes));
	uint64_t *cur = NULL;
	int nm = w->nmetrics, r = fmap && pmap && procs && codes ? 0 : -ENOMEM;
	if (!r)
		r = mf_window_labels(sm, lines, fns, fn_of, full_names, fmap, pmap);
	for (uint32_t p = 0; p < sm->nprocesses && !r; p++) {
		procs[p] = mf_window_process(m, sm, p);
		if (procs[p] != MF_NONE)
			w->present[(size_t)k * m->nprocesses + procs[p]] = 1;
	}
	for (uint32_t i = 0; i < sm->nthreads && !r; i++)
		codes[i] =
		    mf_window_thread(m, w->by_name, procs[sm->threads[i].process], &sm->threads[i]);
	size_t ncur = 0;
	for (size_t s = 0; s < sm->nsamples && !r; s++) {
		const struct mf_sample *x = &sm->samples[s];
		uint32_t node = 0, row, p = sm->threads[x->thread].process;
		uint64_t view = mf_model_view(sm, (uint32_t)s);
		if (rooted)
			r = mf_pathtrie_child(t, node, pmap[p], &node);
		for (uint32_t d = 0; d < MF_VIEW_DEPTH(view) && !r; d++)
			r = mf_pathtrie_child(t, node, fmap[mf_model_view_frame(sm, view, d)],
					      &node);
		if (!r)
			r = mf_window_row(w, node, codes[x->thread], procs[p], &row);
		if (!r && row >= ncur) {
			size_t n = w->rows.count + 64;
			uint64_t *g = realloc(cur, n * nm * sizeof(*g));
			if (!g) {
				r = -ENOMEM;
				break;
			}
			memset(g + ncur * nm, 0, (n - ncur) * nm * sizeof(*g));
			cur = g, ncur = n;
		}
		for (int j = 0; j < nm && !r; j++)
			cur[(size_t)row * nm + j] += sm->values[w->metric[j]][s];
	}
	for (uint32_t row = 0; row < w->rows.count && !r; row++) {
		if (w->proc[row] == MF_NONE ||
		    !w->present[(size_t)k * m->nprocesses + w->proc[row]])
			continue;
		struct mf_html_delta d = {.state = k, .row = row};
		int changed = 0;
		for (int j = 0; j < nm; j++) {
			uint64_t now = row < ncur ? cur[(size_t)row * nm + j] : 0,
				 *was = &w->last[(size_t)row * nm + j];
			d.v[j] = (int64_t)(now - *was);
			changed |= d.v[j] != 0;
			*was = now;
		}
		struct mf_html_delta *to =
		    changed ? mf_array_push(w->deltas, w->ndeltas, w->cap_deltas) : &d;
		if (!to)
			r = -ENOMEM;
		else
			*to = d;
	}
	free(cur);
	free(fmap);
	free(pmap);
	free(procs);
	free(codes);
	return r;
}

/* (qsort's context: the rows' last counts, and the metric ranked by) */
static const struct mf_html_windows *mf_rank_w;
static int mf_rank_j;
static int mf_window_rank_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int nm = mf_rank_w->nmetrics;
	uint64_t vx = mf_rank_w->last[(size_t)x * nm + mf_rank_j],
		 vy = mf_rank_w->last[(size_t)y * nm + mf_rank_j];
	return vx != vy ? (vx < vy ? 1 : -1) : (x > y) - (x < y);
}

/* Rows past the busiest MF_HTML_WINDOW_STACKS by calls and by bytes folded: row_of. */
static int mf_window_fold(struct mf_html_windows *w, struct mf_pathtrie *t, struct mf_labels *lines,
			  struct mf_labels *fns, uint32_t **fn_of)
{
	size_t n = w->nrows = w->rows.count;
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	uint8_t *keep = calloc(n + 1, 1);
	int r = order && keep && (w->row_of = malloc((n + 1) * sizeof(*w->row_of))) ? 0 : -ENOMEM;
	for (int j = 0; j < 2 && j < w->nmetrics && !r; j++) {
		for (uint32_t i = 0; i < n; i++)
			order[i] = i;
		mf_rank_w = w, mf_rank_j = j;
		if (n > MF_HTML_WINDOW_STACKS)
			qsort(order, n, sizeof(*order), mf_window_rank_cmp);
		for (size_t i = 0; i < n && i < MF_HTML_WINDOW_STACKS; i++)
			keep[order[i]] = 1;
	}
	uint32_t folded = MF_NONE, line, fn;
	for (uint32_t i = 0; i < n && !r; i++) {
		if (keep[i]) {
			w->row_of[i] = i;
			continue;
		}
		if (folded == MF_NONE) {
			if (!(r = mf_window_label(lines, MF_FOLDED_TEXT, &line)) &&
			    !(r = mf_window_label(fns, MF_FOLDED_TEXT, &fn)) &&
			    !(r = mf_window_fn(fn_of, lines, line, fn)))
				r = mf_pathtrie_child(t, 0, line, &folded);
			if (r)
				break;
		}
		r = mf_window_row(w, folded, w->rows.label[i], w->proc[i], &w->row_of[i]);
	}
	w->nwritten = (uint32_t)(w->rows.count - n);
	for (uint32_t i = 0; i < n && !r; i++)
		w->nwritten += w->row_of[i] == i;
	free(order);
	free(keep);
	return r;
}

int mf_html_windows_map(struct mf_html_windows *w, const struct mf_model *m,
			const struct mf_states *s, struct mf_pathtrie *t, struct mf_labels *lines,
			struct mf_labels *fns, uint32_t **fn_of, int rooted, int full_names)
{
	static const int carried[] = {MF_METRIC_CALLS, MF_METRIC_BYTES, MF_METRIC_TIME,
				      MF_METRIC_TEMPORARY};
	*w = (struct mf_html_windows){0};
	for (int j = 0; j < MF_HTML_WINDOW_METRICS; j++)
		if (mf_model_holds(m, carried[j]))
			w->metric[w->nmetrics++] = carried[j];
	if (!s || !s->count)
		return 0;
	int r = mf_pathtrie_init(&w->rows);
	if (!r && !(w->present = calloc(s->count * m->nprocesses + 1, 1)))
		r = -ENOMEM;
	if (!r && !(w->by_name = malloc((m->nthreads + 1) * sizeof(*w->by_name))))
		r = -ENOMEM;
	for (uint32_t i = 0; !r && i < m->nthreads; i++)
		w->by_name[i] = i;
	mf_sort_m = m;
	if (!r)
		qsort(w->by_name, m->nthreads, sizeof(*w->by_name), mf_window_thread_cmp);
	for (size_t k = 0; k < s->count && !r; k++)
		r = mf_window_state(w, m, (uint32_t)k, &s->v[k].m, t, lines, fns, fn_of, rooted,
				    full_names);
	if (!r)
		r = mf_window_fold(w, t, lines, fns, fn_of);
	return r;
}

int mf_html_windows_write(FILE *out, const struct mf_html_windows *w, const struct mf_model *m,
			  const struct mf_states *s, const int *held, int nheld)
{
	if (!s || !s->count || !w->row_of) {
		fputs(",\n\"windows\":null", out);
		return 0;
	}
	fputs(",\n\"windows\":{\"metrics\":[", out);
	for (int j = 0; j < w->nmetrics; j++)
		for (int k = 0; k < nheld; k++)
			if (held[k] == w->metric[j])
				fprintf(out, j ? ",%d" : "%d", k);
	size_t folded = w->nrows - (w->nwritten - (w->rows.count - w->nrows));
	fprintf(out, "],\"keep\":%d,\"stacks\":%zu,\"folded\":%zu,\"skipped\":%zu",
		MF_HTML_WINDOW_STACKS, w->nrows, folded, s->skipped);
	fputs(",\n\"states\":[", out);
	for (size_t k = 0; k < s->count; k++) {
		fprintf(out, "%s[%" PRIu64 ",[", k ? "," : "", s->v[k].number);
		for (uint32_t p = 0, n = 0; p < m->nprocesses; p++)
			if (w->present[k * m->nprocesses + p])
				fprintf(out, n++ ? ",%" PRIu32 : "%" PRIu32, p);
		fputs("]]", out);
	}
	/* (a row: its leaf, its thread in the page's model or -1, its process or -1) */
	fputs("],\n\"rows\":[", out);
	for (uint32_t i = 0, n = 0; i < w->rows.count; i++) {
		if (i < w->nrows && w->row_of[i] != i)
			continue; /* (folded: written as its fold's row) */
		uint32_t code = w->rows.label[i], p = w->proc[i];
		fprintf(out, "%s%" PRIu32 ",%" PRId64 ",%" PRId64, n++ ? "," : "",
			w->rows.parent[i], code < 0x80000000u ? (int64_t)code : -1,
			p == MF_NONE ? -1 : (int64_t)p);
	}
	/* the rows as written: kept rows, then fold rows, in the order made */
	uint32_t *written = malloc((w->rows.count + 1) * sizeof(*written));
	int64_t *acc = calloc((size_t)w->rows.count * w->nmetrics + 1, sizeof(*acc));
	uint8_t *touched = calloc(w->rows.count + 1, 1);
	if (!written || !acc || !touched) {
		free(written), free(acc), free(touched);
		return -ENOMEM;
	}
	for (uint32_t i = 0, n = 0; i < w->rows.count; i++)
		written[i] = i < w->nrows && w->row_of[i] != i ? MF_NONE : n++;
	/* each state's changes, a row's [row, change of each metric] one after the other */
	fputs("],\n\"changes\":[", out);
	size_t d = 0;
	for (uint32_t k = 0; k < s->count; k++) {
		for (; d < w->ndeltas && w->deltas[d].state == k; d++) {
			uint32_t to = w->row_of[w->deltas[d].row];
			touched[to] = 1;
			for (int j = 0; j < w->nmetrics; j++)
				acc[(size_t)to * w->nmetrics + j] += w->deltas[d].v[j];
		}
		fputs(k ? ",\n[" : "[", out);
		for (uint32_t i = 0, n = 0; i < w->rows.count; i++) {
			if (!touched[i])
				continue;
			touched[i] = 0;
			int64_t *v = &acc[(size_t)i * w->nmetrics];
			int any = 0;
			for (int j = 0; j < w->nmetrics; j++)
				any |= v[j] != 0;
			if (!any)
				continue;
			fprintf(out, n++ ? ",%" PRIu32 : "%" PRIu32, written[i]);
			for (int j = 0; j < w->nmetrics; j++) {
				fprintf(out, ",%" PRId64, v[j]);
				v[j] = 0;
			}
		}
		fputc(']', out);
	}
	fputs("]}", out);
	free(written);
	free(acc);
	free(touched);
	return 0;
}

void mf_html_windows_free(struct mf_html_windows *w)
{
	mf_pathtrie_free(&w->rows);
	free(w->proc);
	free(w->last);
	free(w->deltas);
	free(w->present);
	free(w->row_of);
	free(w->by_name);
	*w = (struct mf_html_windows){0};
}
