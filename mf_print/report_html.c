/* --html: one self-contained page (mf_print/report_html.html, compiled in) holding the model's
 * stacks as a trie of frame labels, its samples and its threads and processes as JSON; the
 * page's script draws the flame graph and the threshold tree from them. Nothing is fetched:
 * no network, no external file. Every text goes out as a JSON string that cannot end the
 * script element. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "mf_print/report_html_page.h"
#include "pathtrie.h"
#include "report_html_window.h"
#include "report.h"
#include "text.h"
#include "timeline.h"

/* s as a JSON string that is safe inside a script element: '<' as \u003c (no "</script>"),
 * control characters escaped. Labels are already valid UTF-8 (mf_text_escape). */
static void mf_html_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void mf_html_u32s(FILE *out, const char *name, const uint32_t *v, size_t n)
{
	fprintf(out, ",\n\"%s\":[", name);
	for (size_t i = 0; i < n; i++)
		fprintf(out, i ? ",%" PRIu32 : "%" PRIu32, v[i]);
	fputc(']', out);
}

/* Every sample's path into the trie t, its leaf in leaf[sample]: the labels of its frames as
 * the page shows them, its program first (when there are several, as the text reports do),
 * then its frames outermost first. Node 0 is the root; parent < node, so the page sums a
 * node's children in one backward pass. */
static int mf_html_stacks(struct mf_pathtrie *t, const struct mf_model *m,
			  const struct mf_labels *l, int rooted, uint32_t *leaf)
{
	int r = 0;
	for (size_t s = 0; s < m->nsamples && !r; s++) {
		uint32_t node = 0;
		uint64_t view = mf_model_view(m, (uint32_t)s);
		if (rooted)
			r = mf_pathtrie_child(t, node, mf_labels_program(l, m, (uint32_t)s), &node);
		for (uint32_t k = 0; k < MF_VIEW_DEPTH(view) && !r; k++)
			r = mf_pathtrie_child(t, node, l->of_frame[mf_model_view_frame(m, view, k)],
					      &node);
		leaf[s] = node;
	}
	return r;
}

/* The label of each line label's function: "f file.c:12" and "f [inlined] file.c:9" both
 * become "f", as the page merges them unless asked for lines. */
static int mf_html_functions(const struct mf_model *m, const struct mf_labels *lines,
			     struct mf_labels *fns, int full_names, uint32_t *fn_of)
{
	int r = mf_labels_build(fns, m, MF_LABEL_FUNCTION, full_names, mf_text_clean);
	for (size_t f = 0; f < m->nframes && !r; f++)
		fn_of[lines->of_frame[f]] = fns->of_frame[f];
	for (size_t p = 0; p < m->nprocesses && !r; p++)
		fn_of[lines->of_process[p]] = fns->of_process[p];
	return r;
}

/* Each process's timeline (timeline.h) and snapshots, times in ns after its first point (a
 * page's numbers hold 2^53 exactly; the epoch's nanoseconds do not): null when it kept none.
 * Its calls are drawn spread (timeline.h), a bar no finer than its span. */
static int mf_html_timelines(FILE *out, const struct mf_model *m)
{
	fputs(",\n\"timelines\":[", out);
	for (uint32_t i = 0; i < m->nprocesses; i++) {
		const struct mf_process *p = &m->processes[i];
		struct mf_timeline t;
		if (mf_timeline_build(m, i, &t))
			return -ENOMEM;
		fputs(i ? "," : "", out);
		if (!t.kept || !t.count) {
			fputs("null", out);
			mf_timeline_free(&t);
			continue;
		}
		uint64_t t0 = t.points[0].time_ns;
		fprintf(out,
			"{\"interval\":%" PRIu64 ",\"span\":%" PRIu64 ",\"live\":%s,\"points\":[",
			t.interval_ns, t.span_ns, t.live ? "true" : "false");
		/* (a point: time, calls, bytes, live bytes, calls spread and spread just before) */
		for (size_t k = 0; k < t.count; k++) {
			const struct mf_timeline_point *x = &t.points[k];
			fprintf(out,
				"%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 "]",
				k ? "," : "", x->time_ns - t0, x->calls, x->bytes, x->live_bytes,
				x->spread[MF_SPREAD_CALLS], x->spread_before[MF_SPREAD_CALLS]);
		}
		fputs("],\"snapshots\":[", out);
		for (uint32_t k = 0; k < p->nsnaps; k++)
			fprintf(out, "%s[%" PRId64 ",%" PRIu64 "]", k ? "," : "",
				(int64_t)(p->snaps[k].time_ns - t0), p->snaps[k].number);
		fputs("]}", out);
		mf_timeline_free(&t);
	}
	fputc(']', out);
	return 0;
}

static void mf_html_data(FILE *out, const struct mf_model *m, const struct mf_pathtrie *t,
			 const struct mf_labels *lines, const struct mf_labels *fns,
			 const uint32_t *fn_of, const uint32_t *leaf,
			 const struct mf_report_options *o)
{
	fprintf(out, "{\"format\":1,\"estimated\":%s,\"rooted\":%s,\"metrics\":[",
		m->estimated ? "true" : "false",
		mf_labels_rooted(lines, o->merge_processes) ? "true" : "false");
	int held[MF_METRICS], nheld = mf_model_metrics(m, NULL, held), chosen = 0;
	for (int k = 0; k < nheld; k++) {
		fputs(k ? "," : "", out);
		mf_html_string(out, mf_metric_info[held[k]].name);
		if (held[k] == (int)o->metric)
			chosen = k;
	}
	fprintf(out, "],\"metric\":%d,\"threshold\":%g,\"window\":", chosen, o->threshold);
	mf_html_string(out, o->window ? o->window : "");
	fputs(",\n\"functions\":[", out);
	for (size_t i = 0; i < fns->count; i++) {
		fputs(i ? "," : "", out);
		mf_html_string(out, fns->text[i]);
	}
	fputs("],\n\"lines\":[", out);
	for (size_t i = 0; i < lines->count; i++) {
		fputs(i ? "," : "", out);
		mf_html_string(out, lines->text[i]);
	}
	fputc(']', out);
	mf_html_u32s(out, "function_of", fn_of, lines->count);
	/* (a node's parent as how far back it is: mostly the node just before, one digit) */
	fputs(",\n\"parent_back\":[", out);
	for (size_t i = 0; i < t->count; i++)
		fprintf(out, i ? ",%zu" : "%zu", i - t->parent[i]);
	fputc(']', out);
	mf_html_u32s(out, "label", t->label, t->count);
	/* (each sample's leaf from the one before: mostly a node or a few made for it) */
	fputs(",\n\"leaf_step\":[", out);
	for (size_t i = 0; i < m->nsamples; i++)
		fprintf(out, i ? ",%" PRId64 : "%" PRId64,
			(int64_t)leaf[i] - (int64_t)(i ? leaf[i - 1] : 0));
	fputc(']', out);
	fputs(",\n\"thread_of\":[", out);
	for (size_t s = 0; s < m->nsamples; s++)
		fprintf(out, s ? ",%" PRIu32 : "%" PRIu32, m->samples[s].thread);
	fputc(']', out);
	for (int k = 0; k < nheld; k++) {
		fprintf(out, ",\n\"%s\":[", mf_metric_info[held[k]].name);
		for (size_t s = 0; s < m->nsamples; s++)
			fprintf(out, s ? ",%" PRIu64 : "%" PRIu64, m->values[held[k]][s]);
		fputc(']', out);
	}
	char text[512];
	fputs(",\n\"threads\":[", out);
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct mf_thread *th = &m->threads[i];
		fprintf(out, "%s[%" PRIu32 ",%" PRIu64 ",", i ? "," : "", th->process, th->tid);
		mf_text_escape(th->name, text, sizeof(text));
		mf_html_string(out, text);
		fputc(']', out);
	}
	fputs("],\n\"processes\":[", out);
	for (size_t i = 0; i < m->nprocesses; i++) {
		const struct mf_process *p = &m->processes[i];
		char how[128];
		fprintf(out, "%s[%" PRIu64 ",", i ? "," : "", p->pid);
		mf_html_string(out, mf_text_escape(p->name, text, sizeof(text)));
		fputc(',', out);
		mf_process_end_text(p, how, sizeof(how));
		mf_html_string(out, how);
		fputc(',', out);
		mf_html_string(out, mf_text_escape(p->cmdline, text, sizeof(text)));
		fputc(']', out);
	}
	fputc(']', out);
}

int mf_report_html(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	struct mf_labels lines = {0}, fns = {0};
	struct mf_pathtrie t = {0};
	struct mf_html_windows w = {0};
	uint32_t *leaf = malloc((m->nsamples ? m->nsamples : 1) * sizeof(*leaf)), *fn_of = NULL;
	int r = leaf ? mf_pathtrie_init(&t) : -ENOMEM;
	if (!r)
		r = mf_labels_build(&lines, m, MF_LABEL_LINE, o->full_names, mf_text_clean);
	if (!r && !(fn_of = malloc((lines.count ? lines.count : 1) * sizeof(*fn_of))))
		r = -ENOMEM;
	if (!r)
		r = mf_html_functions(m, &lines, &fns, o->full_names, fn_of);
	if (!r) {
		uint32_t root;
		r = mf_pathtrie_child(&t, 0, UINT32_MAX,
				      &root); /* (node 0; its label is not shown) */
	}
	if (!r)
		r = mf_html_stacks(&t, m, &lines, mf_labels_rooted(&lines, o->merge_processes),
				   leaf);
	if (!r)
		r = mf_html_windows_map(&w, m, o->states, &t, &lines, &fns, &fn_of,
					mf_labels_rooted(&lines, o->merge_processes),
					o->full_names);
	if (!r) {
		const char *at = strstr(mf_html_page, "@MF_DATA@");
		fwrite(mf_html_page, 1, (size_t)(at - mf_html_page), out);
		mf_html_data(out, m, &t, &lines, &fns, fn_of, leaf, o);
		r = mf_html_timelines(out, m);
		int held[MF_METRICS], nheld = mf_model_metrics(m, NULL, held);
		if (!r)
			r = mf_html_windows_write(out, &w, m, o->states, held, nheld);
		fputc('}', out);
		fputs(at + strlen("@MF_DATA@"), out);
	}
	mf_labels_free(&lines);
	mf_labels_free(&fns);
	mf_pathtrie_free(&t);
	mf_html_windows_free(&w);
	free(fn_of);
	free(leaf);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
