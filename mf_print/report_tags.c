/* --tags: malloc-tag's view of the profile, the tree of tag paths (malloc_freq_tag_push): for
 * each, the calls and bytes made inside it with the tags nested in it (total) and in it alone
 * (self), and their share of all. Calls outside any tag are one line, "(no tag)". Tags are the
 * outermost frames of each stack (model.c), so a stack's tag path is its leading tag frames. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fold.h"
#include "pathtrie.h"
#include "report.h"
#include "text.h"

#define MF_TAG_NONE (MF_NONE - 1) /* the frame of the node of calls outside any tag */

/* A node's counts; its tag's frame (MF_NONE for the root, every call) and its parent are its
 * label and parent in mf_tag_tree.paths. */
struct mf_tag_node {
	uint64_t self[MF_METRICS], total[MF_METRICS];
};

struct mf_tag_tree {
	struct mf_pathtrie paths; /* node 0 the root, its parent MF_NONE */
	struct mf_tag_node *v;	  /* by node */
	size_t cap;
	int saturated;
};

/* The child of node parent for frame, made if new; MF_NONE when out of memory. */
static uint32_t mf_tag_child(struct mf_tag_tree *t, uint32_t parent, uint32_t frame)
{
	uint32_t id;
	size_t count = t->paths.count;
	if (mf_pathtrie_child(&t->paths, parent, frame, &id))
		return MF_NONE;
	if (t->paths.count != count && !mf_array_push(t->v, count, t->cap))
		return MF_NONE;
	return id;
}

static const struct mf_tag_tree *mf_tag_sort_tree;
static enum mf_metric mf_tag_sort_metric;
static int mf_tag_cmp(const void *a, const void *b)
{
	const struct mf_tag_node *x = &mf_tag_sort_tree->v[*(const uint32_t *)a],
				 *y = &mf_tag_sort_tree->v[*(const uint32_t *)b];
	uint64_t p = x->total[mf_tag_sort_metric], q = y->total[mf_tag_sort_metric];
	return p < q ? 1 : p > q ? -1 : 0;
}

/* Prints node's children, the busiest first, each under prefix. */
static int mf_tag_print(FILE *out, const struct mf_model *m, const struct mf_tag_tree *t,
			const struct mf_report_options *o, uint32_t node, char *prefix,
			size_t depth)
{
	uint32_t *kids = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = node + 1; i < t->paths.count; i++)
		if (t->paths.parent[i] == node) {
			uint32_t *k = mf_array_push(kids, n, cap);
			if (!k) {
				free(kids);
				return -ENOMEM;
			}
			*k = (uint32_t)i;
		}
	mf_tag_sort_tree = t;
	mf_tag_sort_metric = o->metric;
	if (n > 1) /* (qsort wants a non-null base even for none) */
		qsort(kids, n, sizeof(*kids), mf_tag_cmp);
	const uint64_t *all = t->v[0].total;
	int r = 0;
	for (size_t k = 0; k < n && !r; k++) {
		const struct mf_tag_node *x = &t->v[kids[k]];
		uint32_t frame = t->paths.label[kids[k]];
		char bytes[32], name[3 * MF_TAG_NAME_LEN + 8];
		mf_text_bytes(bytes, sizeof(bytes), x->total[MF_METRIC_BYTES]);
		mf_text_escape(frame == MF_TAG_NONE ? "(no tag)" : m->frames[frame].function, name,
			       sizeof(name));
		int last = k + 1 == n;
		fprintf(out, "%12" PRIu64 " %6.2f%% %11s %11" PRIu64 " %6.2f%%  %s%s%s\n",
			x->total[MF_METRIC_CALLS], mf_text_pct(x->total[o->metric], all[o->metric]),
			bytes, x->self[MF_METRIC_CALLS],
			mf_text_pct(x->self[o->metric], all[o->metric]), prefix,
			depth ? (last ? "`- " : "|- ") : "", name);
		size_t at = strlen(prefix);
		if (depth && at + 4 < 256)
			strcpy(prefix + at, last ? "   " : "|  ");
		r = mf_tag_print(out, m, t, o, kids[k], prefix, depth + 1);
		prefix[at] = 0;
	}
	free(kids);
	return r;
}

int mf_report_tags(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	struct mf_tag_tree t = {0};
	if (mf_pathtrie_init(&t.paths) || mf_tag_child(&t, MF_NONE, MF_NONE) == MF_NONE) {
		mf_pathtrie_free(&t.paths);
		return -ENOMEM; /* (the root: node 0) */
	}
	uint32_t none = MF_NONE; /* the "(no tag)" node: made when first needed */
	for (size_t i = 0; i < m->nsamples; i++) {
		const struct mf_stack *s = &m->stacks[m->samples[i].stack];
		const uint32_t *fr = mf_model_stack_frames(m, m->samples[i].stack);
		uint32_t node = 0;
		for (uint32_t k = 0; k < s->depth && m->frames[fr[k]].kind == MF_FRAME_TAG; k++)
			if ((node = mf_tag_child(&t, node, fr[k])) == MF_NONE)
				break;
		if (node == 0 && none == MF_NONE)
			node = none = mf_tag_child(&t, 0, MF_TAG_NONE);
		else if (node == 0)
			node = none;
		if (node == MF_NONE) {
			free(t.v);
			mf_pathtrie_free(&t.paths);
			return -ENOMEM;
		}
		mf_fold_add(t.v[node].self, m, i, &t.saturated);
	}
	for (size_t i = t.paths.count; i-- > 0;) { /* (children after their parent: totals up) */
		mf_fold_add_row(t.v[i].total, t.v[i].self, &t.saturated);
		if (i)
			mf_fold_add_row(t.v[t.paths.parent[i]].total, t.v[i].total, &t.saturated);
	}
	fprintf(out, "\nTag paths (malloc_freq_tag_push), the busiest first: calls and bytes made "
		     "inside each with the tags nested in it (total), and in it alone (self)\n\n");
	fprintf(out, "%12s %7s %11s %11s %7s  %s\n", "total", "%", "bytes", "self", "%", "tag");
	char prefix[256] = "";
	int r = mf_tag_print(out, m, &t, o, 0, prefix, 0);
	free(t.v);
	mf_pathtrie_free(&t.paths);
	return r ? r : ferror(out) ? -EIO : 0;
}
