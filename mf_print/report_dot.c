/* --dot: a call graph for Graphviz in the style of malloc-tag's: a node per function with its
 * self (calls it made to the allocator itself) and total (calls made under it) calls and
 * bytes, filled the redder the larger its self share; an edge per caller and callee with the
 * calls (--sort bytes: bytes) made through it; nodes and edges below the threshold left out.
 * Functions are merged by name across threads and processes; an allocation function has a
 * node apart from a function of the same name (glibc's loader inlines one called calloc). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fold.h"
#include "labels.h"
#include "pathtrie.h"
#include "report.h"
#include "text.h"

struct mf_dot_node {
	uint64_t self[MF_METRICS], total[MF_METRICS];
	uint64_t last; /* the sample that last added to total, plus one */
};

/* An edge: its caller and callee nodes are its pair in mf_dot.edges. */
struct mf_dot_edge {
	uint64_t value[MF_METRICS];
	uint64_t last;
};

struct mf_dot {
	struct mf_dot_node *node; /* by label; then the allocation functions', by label */
	struct mf_pathtrie edges; /* (from, to): the edges, each a pair of nodes */
	struct mf_dot_edge *edge; /* by edge */
	size_t cap_edges;
	int flag;
};

/* The edge from -> to, made if new; NULL when out of memory. */
static struct mf_dot_edge *mf_dot_edge(struct mf_dot *d, uint32_t from, uint32_t to)
{
	uint32_t id;
	size_t count = d->edges.count;
	if (mf_pathtrie_child(&d->edges, from, to, &id))
		return NULL;
	if (d->edges.count == count)
		return &d->edge[id];
	return mf_array_push(d->edge, count, d->cap_edges);
}

/* The node of frame f: its function's, or as the stack's last frame its allocation function's. */
static uint32_t mf_dot_node_of(const struct mf_labels *l, uint32_t f, int last)
{
	return l->of_frame[f] + (last ? (uint32_t)l->count : 0);
}

/* Adds sample s's values to its functions and edges (each once, however often it recurs). */
static int mf_dot_sample(struct mf_dot *d, const struct mf_model *m, const struct mf_labels *l,
			 uint32_t s)
{
	const struct mf_stack *st = &m->stacks[m->samples[s].stack];
	const uint32_t *fr = mf_model_stack_frames(m, m->samples[s].stack);
	for (uint32_t k = 0; k < st->depth; k++) {
		uint32_t id = mf_dot_node_of(l, fr[k], k + 1 == st->depth);
		struct mf_dot_node *n = &d->node[id];
		if (n->last != s + 1)
			mf_fold_add(n->total, m, s, &d->flag);
		if (k + 2 == st->depth)
			mf_fold_add(n->self, m, s, &d->flag);
		n->last = s + 1;
		if (k + 1 == st->depth)
			break;
		uint32_t to = mf_dot_node_of(l, fr[k + 1], k + 2 == st->depth);
		if (to == id)
			continue; /* (a function inlined into itself, a recursion: no loop drawn) */
		struct mf_dot_edge *e = mf_dot_edge(d, id, to);
		if (!e)
			return -ENOMEM;
		if (e->last != s + 1)
			mf_fold_add(e->value, m, s, &d->flag);
		e->last = s + 1;
	}
	return 0;
}

/* text as a DOT string's contents: escaped as for a terminal, then '\' and '"' escaped. */
static void mf_dot_text(FILE *out, const char *text)
{
	for (const char *c = text; *c; c++) {
		if (*c == '\\' || *c == '"')
			putc('\\', out);
		putc(*c, out);
	}
}

/* A value of metric k as text: bytes and time in their units, counts as they are. */
static void mf_dot_format(char *buf, size_t size, int k, uint64_t v)
{
	if (k == MF_METRIC_BYTES || k == MF_METRIC_LEAKED || k == MF_METRIC_PEAK ||
	    k == MF_METRIC_MAX_LIVE)
		mf_text_bytes(buf, size, v);
	else if (k == MF_METRIC_TIME || k == MF_METRIC_LIFETIME)
		mf_text_ns(buf, size, (double)v);
	else
		snprintf(buf, size, "%" PRIu64, v);
}

/* "300 calls (40.5%), 293.0 KiB", then a line per other metric m holds ("\ntemporary: 12";
 * none when m is NULL). */
static void mf_dot_values(FILE *out, const struct mf_model *m, const uint64_t *v,
			  const uint64_t *total)
{
	char b[32];
	mf_text_bytes(b, sizeof(b), v[MF_METRIC_BYTES]);
	fprintf(out, "%" PRIu64 " calls (%.1f%%), %s", v[MF_METRIC_CALLS],
		mf_text_pct(v[MF_METRIC_CALLS], total[MF_METRIC_CALLS]), b);
	int held[MF_METRICS], n = m ? mf_model_metrics(m, NULL, held) : 0;
	for (int i = 0; i < n; i++) {
		if (held[i] == MF_METRIC_CALLS || held[i] == MF_METRIC_BYTES)
			continue;
		mf_dot_format(b, sizeof(b), held[i], v[held[i]]);
		fprintf(out, "\\n%s: %s", mf_metric_info[held[i]].name, b);
	}
}

static void mf_dot_write(FILE *out, const struct mf_model *m, const struct mf_dot *d,
			 const struct mf_labels *l, const struct mf_report_options *o,
			 const uint64_t *total)
{
	enum mf_metric k = o->metric;
	const double t = o->threshold;
	fprintf(out,
		"digraph malloc_freq {\n"
		"  graph [rankdir=TB, fontname=\"sans-serif\", label=\"malloc_freq: %s",
		m->estimated ? "~" : "");
	mf_dot_values(out, NULL, total, total);
	fprintf(out,
		" requested%s; nodes and edges below %g%% of all %s left out; self: calls "
		"made to the allocator itself, total: made under it",
		m->estimated ? " (estimates: sampled, scaled by the sampling rate; every count "
			       "below too)"
			     : "",
		o->threshold, mf_metric_info[k].name);
	if (o->window && o->window[0]) {
		fputs("; counts ", out);
		mf_dot_text(out, o->window);
	}
	fputs("\", labelloc=t];\n"
	      "  node [shape=box, style=filled, fontname=\"sans-serif\"];\n",
	      out);
	for (size_t i = 0; i < 2 * l->count; i++) {
		const struct mf_dot_node *n = &d->node[i];
		/* (the tree's rule: below the threshold's share, or in no stack read) */
		if (!n->last || mf_text_pct(n->total[k], total[k]) < t)
			continue;
		fprintf(out, "  n%zu [label=\"", i);
		mf_dot_text(out, l->text[i % l->count]);
		if (i >= l->count) { /* an allocation function */
			fputs("\\n", out);
			mf_dot_values(out, m, n->total, total);
			fputs("\", shape=ellipse, fillcolor=\"#d0d0d0\"];\n", out);
			continue;
		}
		fputs("\\nself: ", out);
		mf_dot_values(out, m, n->self, total);
		fputs("\\ntotal: ", out);
		mf_dot_values(out, m, n->total, total);
		/* a share of 1% is faintly red, 25% half, 100% fully: the square root spreads
		 * the small shares most graphs are made of */
		double share = total[k] ? (double)n->self[k] / (double)total[k] : 0;
		fprintf(out, "\", fillcolor=\"0.000 %.3f 1.000\"];\n", sqrt(share));
	}
	for (size_t i = 0; i < d->edges.count; i++) {
		const struct mf_dot_edge *e = &d->edge[i];
		uint32_t from = d->edges.parent[i], to = d->edges.label[i];
		if (mf_text_pct(e->value[k], total[k]) < t ||
		    mf_text_pct(d->node[from].total[k], total[k]) < t ||
		    mf_text_pct(d->node[to].total[k], total[k]) < t)
			continue;
		double share = total[k] ? (double)e->value[k] / (double)total[k] : 0;
		char b[32];
		mf_dot_format(b, sizeof(b), k, e->value[k]);
		fprintf(out, "  n%" PRIu32 " -> n%" PRIu32 " [label=\"%s\", penwidth=%.2f];\n",
			from, to, b, 1 + 4 * share);
	}
	fputs("}\n", out);
}

int mf_report_dot(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	struct mf_dot d = {0};
	struct mf_labels l;
	int r = mf_labels_build(&l, m, MF_LABEL_FUNCTION, o->full_names, mf_text_clean);
	if (!r && (!(d.node = calloc(l.count ? 2 * l.count : 1, sizeof(*d.node))) ||
		   mf_pathtrie_init(&d.edges)))
		r = -ENOMEM;
	for (size_t s = 0; !r && s < m->nsamples; s++)
		r = mf_dot_sample(&d, m, &l, (uint32_t)s);
	if (!r) {
		uint64_t total[MF_METRICS];
		for (int k = 0; k < MF_METRICS; k++)
			total[k] = mf_model_total(m, (enum mf_metric)k, NULL);
		mf_dot_write(out, m, &d, &l, o, total);
	}
	mf_labels_free(&l);
	free(d.node);
	free(d.edge);
	mf_pathtrie_free(&d.edges);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
