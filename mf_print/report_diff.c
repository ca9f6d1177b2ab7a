/* --diff BASE: how this profile differs from a base profile, stack by stack. Stacks match by
 * what they show (function names, and the program when there are several), not by address, so
 * two builds of one program compare. The text report lists the stacks by absolute change and
 * prints the change as a signed tree; --collapsed prints both counts per stack, two columns
 * as difffolded.pl makes them for flamegraph.pl. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fold.h"
#include "idset.h"
#include "labels.h"
#include "pathtrie.h"
#include "report.h"
#include "text.h"

/* A stack of either profile: names ids, outermost first, and its sums in each. */
struct mf_diff_stack {
	uint64_t first; /* its names: ids[first .. first + depth) */
	uint32_t depth;
	uint64_t hash;
	uint64_t base[MF_METRICS], now[MF_METRICS];
};

/* A node of the signed tree (its parent and name in mf_diff.tree), the allocation function at
 * the root. */
struct mf_diff_node {
	uint32_t child, next; /* first child, next sibling (MF_NONE: none) */
	int64_t delta[MF_METRICS];
	uint64_t base[MF_METRICS], now[MF_METRICS];
};

struct mf_diff {
	struct mf_labels names; /* every text shown, of both profiles, interned once */
	uint32_t *ids;
	size_t nids, cap_ids;
	struct mf_diff_stack *stacks;
	size_t nstacks, cap_stacks;
	struct mf_idset stack_set;
	struct mf_pathtrie tree;    /* the signed tree: names under names (MF_NONE: a root) */
	struct mf_diff_node *nodes; /* by node of tree */
	size_t cap_nodes;
	uint64_t total_base[MF_METRICS], total_now[MF_METRICS];
	int rooted; /* stacks start with their program */
	int flag;
};

static uint64_t mf_diff_ids_hash(const uint32_t *ids, uint32_t n)
{
	uint64_t h = 0x452821e638d01377ull ^ n;
	for (uint32_t i = 0; i < n; i++)
		h = mf_hash_mix(h, ids[i]);
	return h;
}

static uint64_t mf_diff_stack_rehash(const void *ctx, uint32_t id)
{
	return ((const struct mf_diff *)ctx)->stacks[id].hash;
}

/* The stack whose names are the last n ids (just appended), made if new; a stack found drops
 * them again. NULL when out of memory. */
static struct mf_diff_stack *mf_diff_stack(struct mf_diff *d, uint32_t n)
{
	const uint32_t *ids = d->ids + d->nids - n;
	uint64_t hash = mf_diff_ids_hash(ids, n);
	for (size_t at = mf_idset_first(&d->stack_set, hash);
	     d->stack_set.slot[at] != MF_IDSET_EMPTY; at = mf_idset_next(&d->stack_set, at)) {
		struct mf_diff_stack *s = &d->stacks[d->stack_set.slot[at]];
		if (s->hash == hash && s->depth == n &&
		    !memcmp(d->ids + s->first, ids, n * sizeof(*ids))) {
			d->nids -= n;
			return s;
		}
	}
	if (mf_idset_room(&d->stack_set, mf_diff_stack_rehash, d))
		return NULL;
	struct mf_diff_stack *s = mf_array_push(d->stacks, d->nstacks, d->cap_stacks);
	if (!s)
		return NULL;
	s->first = d->nids - n;
	s->depth = n;
	s->hash = hash;
	mf_idset_put(&d->stack_set, hash, (uint32_t)d->nstacks - 1);
	return s;
}

/* A label as the collapsed format allows it (see report_collapsed.c). */
static void mf_diff_clean(const char *in, char *out, size_t size)
{
	mf_text_escape(in, out, size);
	for (char *c = out; *c; c++)
		if (*c == ';')
			*c = ':';
}

/* Adds every sample of m to the stacks, as the base's (now: 0) or this profile's. rooted:
 * each stack starts with its program. */
static int mf_diff_add(struct mf_diff *d, const struct mf_model *m, int now, int full_names,
		       int rooted)
{
	struct mf_labels l;
	int r = mf_labels_build(&l, m, MF_LABEL_FUNCTION, full_names, mf_diff_clean);
	uint32_t *name = r ? NULL : malloc((l.count ? l.count : 1) * sizeof(*name));
	if (!r && !name)
		r = -ENOMEM;
	for (size_t i = 0; !r && i < l.count; i++)
		r = mf_labels_add(&d->names, l.text[i], &name[i]);
	for (size_t s = 0; !r && s < m->nsamples; s++) {
		const struct mf_stack *st = &m->stacks[m->samples[s].stack];
		const uint32_t *fr = mf_model_stack_frames(m, m->samples[s].stack);
		uint32_t n = st->depth + (uint32_t)rooted;
		uint32_t *ids = mf_array_room_n(d->ids, d->nids, n, &d->cap_ids, sizeof(*ids));
		if (!ids) {
			r = -ENOMEM;
			break;
		}
		d->ids = ids;
		if (rooted)
			d->ids[d->nids++] = name[mf_labels_program(&l, m, (uint32_t)s)];
		for (uint32_t k = 0; k < st->depth; k++)
			d->ids[d->nids++] = name[l.of_frame[fr[k]]];
		struct mf_diff_stack *ds = mf_diff_stack(d, n);
		if (!ds) {
			r = -ENOMEM;
			break;
		}
		mf_fold_add(now ? ds->now : ds->base, m, s, &d->flag);
		mf_fold_add(now ? d->total_now : d->total_base, m, s, &d->flag);
	}
	free(name);
	mf_labels_free(&l);
	return r;
}

static int64_t mf_diff_delta(uint64_t base, uint64_t now)
{
	int64_t b = base > INT64_MAX ? INT64_MAX : (int64_t)base;
	int64_t n = now > INT64_MAX ? INT64_MAX : (int64_t)now;
	return n - b;
}

/* The standard deviation of a sampled estimate v of metric k (calls sampled one in rate, each
 * weighted by rate: the variance is about v (rate - 1) for a count, and for bytes that times
 * the mean request of the calls). */
static double mf_diff_var(enum mf_metric k, const uint64_t *v, uint64_t rate)
{
	double x = (double)v[k] * (double)(rate - 1);
	if (k == MF_METRIC_BYTES && v[MF_METRIC_CALLS])
		x *= (double)v[MF_METRIC_BYTES] / (double)v[MF_METRIC_CALLS];
	return x;
}

static uint64_t mf_diff_abs(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* Is stack s's change dk in metric k within twice its sampling noise's standard deviation? */
static int mf_diff_noise(enum mf_metric k, const struct mf_diff_stack *s, int64_t dk,
			 uint64_t rate_base, uint64_t rate_now)
{
	if (rate_base <= 1 && rate_now <= 1)
		return 0;
	double var = mf_diff_var(k, s->base, rate_base) + mf_diff_var(k, s->now, rate_now);
	double d = (double)mf_diff_abs(dk);
	return d * d <= 4 * var;
}

/* Both profiles' stacks, matched. 0 or -ENOMEM. */
static int mf_diff_build(struct mf_diff *d, const struct mf_model *m,
			 const struct mf_report_options *o)
{
	memset(d, 0, sizeof(*d));
	if (mf_idset_init(&d->names.set, 1024) || mf_idset_init(&d->stack_set, 1024) ||
	    mf_pathtrie_init(&d->tree))
		return -ENOMEM;
	/* rooted when either profile has several programs (as the tree would be) */
	const struct mf_model *both[2] = {m, o->base};
	int r = 0;
	for (int i = 0; i < 2 && !r; i++) {
		struct mf_labels l;
		r = mf_labels_build(&l, both[i], MF_LABEL_FUNCTION, 0, NULL);
		d->rooted |= !r && mf_labels_rooted(&l, o->merge_processes);
		mf_labels_free(&l);
	}
	if (!r)
		r = mf_diff_add(d, o->base, 0, o->full_names, d->rooted);
	if (!r)
		r = mf_diff_add(d, m, 1, o->full_names, d->rooted);
	return r;
}

static void mf_diff_free(struct mf_diff *d)
{
	mf_labels_free(&d->names);
	free(d->ids);
	free(d->stacks);
	free(d->stack_set.slot);
	free(d->nodes);
	mf_pathtrie_free(&d->tree);
}

static enum mf_metric mf_diff_metric;
static const struct mf_diff *mf_diff_sorting;

/* Largest absolute change first; equal ones in the order of their names. */
static int mf_diff_cmp(const void *pa, const void *pb)
{
	const struct mf_diff_stack *a = &mf_diff_sorting->stacks[*(const uint32_t *)pa];
	const struct mf_diff_stack *b = &mf_diff_sorting->stacks[*(const uint32_t *)pb];
	enum mf_metric k = mf_diff_metric;
	uint64_t x = mf_diff_abs(mf_diff_delta(a->base[k], a->now[k]));
	uint64_t y = mf_diff_abs(mf_diff_delta(b->base[k], b->now[k]));
	if (x != y)
		return x > y ? -1 : 1;
	for (uint32_t i = 0; i < a->depth && i < b->depth; i++) {
		int c = strcmp(mf_diff_sorting->names.text[mf_diff_sorting->ids[a->first + i]],
			       mf_diff_sorting->names.text[mf_diff_sorting->ids[b->first + i]]);
		if (c)
			return c;
	}
	return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/* "+12", "-3", "0" */
static void mf_diff_count(char *buf, size_t size, int64_t v)
{
	snprintf(buf, size, v > 0 ? "+%" PRId64 : "%" PRId64, v);
}

/* "+1.5 KiB", "-640 B", "0 B" */
static void mf_diff_bytes(char *buf, size_t size, int64_t v)
{
	if (size < 2)
		return;
	buf[0] = v > 0 ? '+' : v < 0 ? '-' : 0;
	mf_text_bytes(buf + (buf[0] != 0), size - 1, mf_diff_abs(v));
}

/* ---- the signed tree ---------------------------------------------------------------------- */

/* The child of parent (MF_NONE: a root) named name, made if new; MF_NONE when out of
 * memory. */
static uint32_t mf_diff_child(struct mf_diff *d, uint32_t parent, uint32_t name)
{
	uint32_t id;
	size_t count = d->tree.count;
	if (mf_pathtrie_child(&d->tree, parent, name, &id))
		return MF_NONE;
	if (d->tree.count == count)
		return id;
	struct mf_diff_node *n = mf_array_push(d->nodes, count, d->cap_nodes);
	if (!n)
		return MF_NONE;
	n->child = MF_NONE;
	n->next = MF_NONE;
	return id;
}

/* Every stack into the tree: the allocation function first, then its callers outwards (the
 * program, when stacks have one, stays the root). */
static int mf_diff_tree(struct mf_diff *d, int rooted)
{
	for (size_t s = 0; s < d->nstacks; s++) {
		const struct mf_diff_stack *st = &d->stacks[s];
		uint32_t node = MF_NONE;
		for (uint32_t i = 0; i < st->depth; i++) {
			uint32_t k = rooted && i == 0 ? 0
				     : rooted	      ? st->depth - i
						      : st->depth - 1 - i;
			node = mf_diff_child(d, node, d->ids[st->first + k]);
			if (node == MF_NONE)
				return -ENOMEM;
			struct mf_diff_node *n = &d->nodes[node];
			mf_fold_add_row(n->base, st->base, &d->flag);
			mf_fold_add_row(n->now, st->now, &d->flag);
			for (int v = 0; v < MF_METRICS; v++)
				n->delta[v] = mf_diff_delta(n->base[v], n->now[v]);
		}
	}
	return 0;
}

static int mf_diff_node_cmp(const void *pa, const void *pb)
{
	const struct mf_diff *d = mf_diff_sorting;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	uint64_t x = mf_diff_abs(d->nodes[ia].delta[mf_diff_metric]),
		 y = mf_diff_abs(d->nodes[ib].delta[mf_diff_metric]);
	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(d->names.text[d->tree.label[ia]], d->names.text[d->tree.label[ib]]);
}

/* Links each node's children, largest absolute change first. 0 or -ENOMEM. */
static int mf_diff_link(struct mf_diff *d, uint32_t *roots)
{
	size_t count = d->tree.count;
	uint32_t *order = malloc((count ? count : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++)
		order[i] = (uint32_t)i;
	qsort(order, count, sizeof(*order), mf_diff_node_cmp);
	*roots = MF_NONE;
	for (size_t i = count; i-- > 0;) { /* (pushed front: the last pushed comes first) */
		struct mf_diff_node *n = &d->nodes[order[i]];
		uint32_t parent = d->tree.parent[order[i]];
		uint32_t *head = parent == MF_NONE ? roots : &d->nodes[parent].child;
		n->next = *head;
		*head = order[i];
	}
	free(order);
	return 0;
}

struct mf_diff_print {
	FILE *out;
	struct mf_diff *d;
	enum mf_metric metric;
	uint64_t floor; /* changes below it are folded */
	struct mf_strbuf prefix;
};

static int mf_diff_print_nodes(struct mf_diff_print *p, uint32_t first)
{
	struct mf_diff *d = p->d;
	int64_t folded[MF_METRICS] = {0};
	size_t nfolded = 0;
	uint32_t last = MF_NONE;
	for (uint32_t c = first; c != MF_NONE; c = d->nodes[c].next)
		if (mf_diff_abs(d->nodes[c].delta[p->metric]) >= p->floor &&
		    d->nodes[c].delta[p->metric])
			last = c;
	int r = 0;
	for (uint32_t c = first; c != MF_NONE && !r; c = d->nodes[c].next) {
		const struct mf_diff_node *n = &d->nodes[c];
		if (mf_diff_abs(n->delta[p->metric]) < p->floor || !n->delta[p->metric]) {
			for (int k = 0; k < MF_METRICS; k++)
				folded[k] += n->delta[k];
			nfolded += n->delta[p->metric] != 0;
			continue;
		}
		char calls[32], bytes[32];
		mf_diff_count(calls, sizeof(calls), n->delta[MF_METRIC_CALLS]);
		mf_diff_bytes(bytes, sizeof(bytes), n->delta[MF_METRIC_BYTES]);
		fprintf(p->out, "%10s %12s %10" PRIu64 " %10" PRIu64 "  ", calls, bytes,
			n->base[MF_METRIC_CALLS], n->now[MF_METRIC_CALLS]);
		if (p->prefix.len)
			fwrite(p->prefix.s, 1, p->prefix.len, p->out);
		int root = d->tree.parent[c] == MF_NONE;
		fprintf(p->out, "%s%s\n",
			root	    ? ""
			: c == last ? "`- "
				    : "|- ",
			d->names.text[d->tree.label[c]]);
		size_t keep = p->prefix.len;
		if (!root)
			r = mf_strbuf_add(&p->prefix, c == last ? "   " : "|  ", 3);
		if (!r)
			r = mf_diff_print_nodes(p, n->child);
		p->prefix.len = keep;
	}
	if (!r && nfolded) {
		char calls[32], bytes[32];
		mf_diff_count(calls, sizeof(calls), folded[MF_METRIC_CALLS]);
		mf_diff_bytes(bytes, sizeof(bytes), folded[MF_METRIC_BYTES]);
		fprintf(p->out, "%10s %12s %10s %10s  ", calls, bytes, "", "");
		if (p->prefix.len)
			fwrite(p->prefix.s, 1, p->prefix.len, p->out);
		fprintf(p->out, "%s(%zu more path%s changed by less than the threshold)\n",
			first == MF_NONE || d->tree.parent[first] == MF_NONE ? "" : "`- ", nfolded,
			nfolded == 1 ? "" : "s");
	}
	return r;
}

int mf_report_diff(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	struct mf_diff d;
	int r = mf_diff_build(&d, m, o);
	enum mf_metric k = o->metric;
	uint32_t *order = r ? NULL : malloc((d.nstacks ? d.nstacks : 1) * sizeof(*order));
	if (!r && !order)
		r = -ENOMEM;
	if (r)
		goto done;
	char b0[32], b1[32], db[32], dc[32], text[4096];
	mf_text_bytes(b0, sizeof(b0), d.total_base[MF_METRIC_BYTES]);
	mf_text_bytes(b1, sizeof(b1), d.total_now[MF_METRIC_BYTES]);
	mf_diff_count(dc, sizeof(dc),
		      mf_diff_delta(d.total_base[MF_METRIC_CALLS], d.total_now[MF_METRIC_CALLS]));
	mf_diff_bytes(db, sizeof(db),
		      mf_diff_delta(d.total_base[MF_METRIC_BYTES], d.total_now[MF_METRIC_BYTES]));
	fprintf(out,
		"malloc_freq diff: %s%" PRIu64 " -> %s%" PRIu64
		" calls (%s), %s -> %s requested (%s)\n"
		"  base: %s\n",
		o->base->estimated ? "~" : "", d.total_base[MF_METRIC_CALLS],
		m->estimated ? "~" : "", d.total_now[MF_METRIC_CALLS], dc, b0, b1, db,
		mf_text_escape(o->base_name, text, sizeof(text)));
	if (o->window && o->window[0])
		fprintf(out, "  counts %s (the base's alike)\n", o->window);
	/* With sampling on either side, a change within twice its sampling noise's standard
	 * deviation is marked: it says nothing of a change in the program. */
	uint64_t rate_base = mf_model_rate(o->base), rate_now = mf_model_rate(m);
	int sampled = rate_base > 1 || rate_now > 1;
	size_t both = 0, only_base = 0, only_now = 0, changed = 0, noise = 0;
	for (size_t i = 0; i < d.nstacks; i++) {
		const struct mf_diff_stack *s = &d.stacks[i];
		int in_base = s->base[MF_METRIC_CALLS] || s->base[MF_METRIC_BYTES];
		int in_now = s->now[MF_METRIC_CALLS] || s->now[MF_METRIC_BYTES];
		both += in_base && in_now;
		only_base += in_base && !in_now;
		only_now += in_now && !in_base;
		int64_t dk = mf_diff_delta(s->base[k], s->now[k]);
		changed += dk != 0;
		noise += dk && mf_diff_noise(k, s, dk, rate_base, rate_now);
		order[i] = (uint32_t)i;
	}
	fprintf(out,
		"  stacks (matched by function names): %zu in both, %zu only in the base, %zu "
		"only in this profile; %zu changed in %s\n",
		both, only_base, only_now, changed, mf_metric_info[k].name);
	if (sampled)
		fprintf(out,
			"  estimates: %s sampled (one call in %" PRIu64 " and in %" PRIu64
			"); %zu of the changes are within twice their sampling noise's standard "
			"deviation, marked (noise): they may be no change at all\n",
			rate_base > 1 && rate_now > 1 ? "both profiles were"
			: rate_base > 1		      ? "the base was"
						      : "this profile was",
			rate_base, rate_now, noise);
	uint64_t larger = d.total_base[k] > d.total_now[k] ? d.total_base[k] : d.total_now[k];
	uint64_t floor = (uint64_t)(o->threshold / 100.0 * (double)larger);
	mf_diff_sorting = &d;
	mf_diff_metric = k;
	qsort(order, d.nstacks, sizeof(*order), mf_diff_cmp);
	fprintf(out, "\nStacks by change in %s", mf_metric_info[k].name);
	if (o->threshold > 0)
		fprintf(out, " (changes below %g%% of the larger total folded: --threshold)",
			o->threshold);
	fprintf(out, "\n\n%10s %12s %10s %10s  stack (allocation <- caller)\n", "calls", "bytes",
		"base", "now");
	size_t shown = 0;
	for (size_t i = 0; i < d.nstacks; i++) {
		const struct mf_diff_stack *s = &d.stacks[order[i]];
		int64_t dk = mf_diff_delta(s->base[k], s->now[k]);
		if (!dk || mf_diff_abs(dk) < floor)
			break;
		mf_diff_count(dc, sizeof(dc),
			      mf_diff_delta(s->base[MF_METRIC_CALLS], s->now[MF_METRIC_CALLS]));
		mf_diff_bytes(db, sizeof(db),
			      mf_diff_delta(s->base[MF_METRIC_BYTES], s->now[MF_METRIC_BYTES]));
		fprintf(out, "%10s %12s %10" PRIu64 " %10" PRIu64 "  ", dc, db,
			s->base[MF_METRIC_CALLS], s->now[MF_METRIC_CALLS]);
		for (uint32_t j = s->depth; j-- > 0;)
			fprintf(out, "%s%s", j + 1 == s->depth ? "" : " <- ",
				d.names.text[d.ids[s->first + j]]);
		fputs(mf_diff_noise(k, s, dk, rate_base, rate_now) ? "  (noise)\n" : "\n", out);
		shown++;
	}
	if (shown < changed)
		fprintf(out, "%10s %12s %10s %10s  (%zu more stack%s changed by less)\n", "", "",
			"", "", changed - shown, changed - shown == 1 ? "" : "s");
	uint32_t roots;
	if ((r = mf_diff_tree(&d, d.rooted)) || (r = mf_diff_link(&d, &roots)))
		goto done;
	fprintf(out,
		"\nThe change as a tree: the allocation function first, then who called it\n\n"
		"%10s %12s %10s %10s  call stack (allocation <- caller)\n",
		"calls", "bytes", "base", "now");
	struct mf_diff_print p = {.out = out, .d = &d, .metric = k, .floor = floor ? floor : 1};
	r = mf_diff_print_nodes(&p, roots);
	free(p.prefix.s);
done:
	free(order);
	mf_diff_free(&d);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}

int mf_report_diff_collapsed(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	struct mf_diff d;
	int r = mf_diff_build(&d, m, o);
	uint32_t *order = r ? NULL : malloc((d.nstacks ? d.nstacks : 1) * sizeof(*order));
	if (!r && !order)
		r = -ENOMEM;
	if (!r) {
		for (size_t i = 0; i < d.nstacks; i++)
			order[i] = (uint32_t)i;
		mf_diff_sorting = &d;
		mf_diff_metric = o->metric;
		qsort(order, d.nstacks, sizeof(*order), mf_diff_cmp);
		for (size_t i = 0; i < d.nstacks; i++) {
			const struct mf_diff_stack *s = &d.stacks[order[i]];
			if (!s->base[o->metric] && !s->now[o->metric])
				continue;
			for (uint32_t j = 0; j < s->depth; j++)
				fprintf(out, "%s%s", j ? ";" : "",
					d.names.text[d.ids[s->first + j]]);
			fprintf(out, " %" PRIu64 " %" PRIu64 "\n", s->base[o->metric],
				s->now[o->metric]);
		}
	}
	free(order);
	mf_diff_free(&d);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
