/* Turning validated profiles into symbolized stacks: walk each leaf up to the root, expand each
 * frame into its inlined functions, intern the labels. Allocations are checked; -ENOMEM
 * propagates to one cleanup in main. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#undef uthash_fatal
#define uthash_fatal(msg) return -ENOMEM
#include <uthash.h>

#include "array.h"
#include "names.h"
#include "stacks.h"

const char *const mf_entry_names[MF_ENTRY_COUNT] = MF_ENTRY_NAMES;

struct mf_label_entry {
	UT_hash_handle hh;
	uint32_t id;
	char text[];
};

/* Labels of one node's own frame (several when functions were inlined there). */
struct mf_node_labels {
	uint32_t first, count; /* into the pool; count 0 = not computed yet */
};

static int mf_label(struct mf_stackset *set, const char *raw, uint32_t *id)
{
	char text[8192];
	size_t len = strnlen(raw, sizeof(text) - 1);
	memcpy(text, raw, len);
	text[len] = 0;
	/* Frames are joined with ';' and end at the last space in collapsed output. */
	for (char *c = text; *c; c++)
		if (*c == ';' || *c == '\n')
			*c = ':';
	struct mf_label_entry *e;
	HASH_FIND(hh, set->label_index, text, len, e);
	if (e) {
		*id = e->id;
		return 0;
	}
	char **l = mf_array_room(set->labels, set->nlabels, &set->labels_capacity, sizeof(*l));
	if (!l)
		return -ENOMEM;
	set->labels = l;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	memcpy(e->text, text, len + 1);
	e->id = (uint32_t)set->nlabels;
	set->labels[set->nlabels++] = e->text;
	HASH_ADD(hh, set->label_index, text, len, e);
	*id = e->id;
	return 0;
}

static const char *mf_basename(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int mf_frame_text(char *buf, size_t size, const struct mf_sym_frame *f,
			 enum mf_label_style style, int full_names)
{
	char name[4096];
	const char *fn = f->function;
	if (!full_names && (strchr(fn, '<') || strchr(fn, '(')) && fn[0] != '[') {
		mf_name_simplify(fn, name, sizeof(name));
		if (name[0])
			fn = name;
	}
	if (style == MF_LABEL_FUNCTION || !f->file)
		return snprintf(buf, size, "%s%s", fn,
				style == MF_LABEL_LINE && f->inlined ? " [inlined]" : "");
	return snprintf(buf, size, "%s%s %s:%d", fn, f->inlined ? " [inlined]" : "",
			mf_basename(f->file), f->line);
}

struct mf_pool {
	uint32_t *ids;
	size_t count, capacity;
};

static int mf_pool_push(struct mf_pool *pool, uint32_t id)
{
	uint32_t *p = mf_array_room(pool->ids, pool->count, &pool->capacity, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pool->ids = p;
	pool->ids[pool->count++] = id;
	return 0;
}

/* The node's own labels, outermost first. */
static int mf_node_labels(struct mf_stackset *set, const struct mf_profile *p, uint64_t i,
			  struct mf_node_labels *memo, struct mf_pool *pool,
			  struct mf_symbolizer *sym, enum mf_label_style style)
{
	if (memo[i].count)
		return 0;
	const struct mf_node *n = &p->nodes[i];
	char text[8192];
	uint32_t id;
	int r;
	memo[i].first = (uint32_t)pool->count;
	if (n->module == MF_MODULE_TRUNCATED || n->module == MF_MODULE_NONE) {
		if (n->module == MF_MODULE_TRUNCATED)
			snprintf(text, sizeof(text), "[truncated stack]");
		else
			snprintf(text, sizeof(text), "[unknown]+0x%" PRIx64, n->rel_pc);
		if ((r = mf_label(set, text, &id)) || (r = mf_pool_push(pool, id)))
			return r;
		memo[i].count = 1;
		return 0;
	}
	const struct mf_module *m = &p->modules->mods[n->module];
	const struct mf_sym_frame *frames;
	int nf = mf_sym_lookup(sym, m->path, m->build_id, m->build_id_len, n->rel_pc, 1, &frames);
	for (int k = nf - 1; k >= 0; k--) {
		mf_frame_text(text, sizeof(text), &frames[k], style, set->full_names);
		if ((r = mf_label(set, text, &id)) || (r = mf_pool_push(pool, id)))
			return r;
	}
	memo[i].count = (uint32_t)nf;
	return 0;
}

static int mf_push_stack(struct mf_stackset *set, const struct mf_stack *s)
{
	struct mf_stack *st = mf_array_room(set->stacks, set->count, &set->capacity, sizeof(*st));
	if (!st)
		return -ENOMEM;
	set->stacks = st;
	set->stacks[set->count++] = *s;
	return 0;
}

static int mf_stacks_profile(struct mf_stackset *set, const struct mf_profile *p, uint32_t thread,
			     struct mf_symbolizer *sym, enum mf_label_style style)
{
	uint64_t rate = p->header.sample_rate;
	struct mf_node_labels *memo = calloc(p->node_count ? p->node_count : 1, sizeof(*memo));
	uint64_t *path = malloc((p->node_count ? p->node_count : 1) * sizeof(*path));
	struct mf_pool pool = {0};
	int r = memo && path ? 0 : -ENOMEM;
	for (uint64_t i = 1; !r && i < p->node_count; i++) {
		const struct mf_node *leaf = &p->nodes[i];
		if (leaf->module != MF_MODULE_ENTRY || !leaf->calls)
			continue;
		size_t depth = 0, nlabels = 0;
		for (uint64_t j = leaf->parent; j; j = p->nodes[j].parent) {
			path[depth++] = j;
			if ((r = mf_node_labels(set, p, j, memo, &pool, sym, style)))
				break;
			nlabels += memo[j].count;
		}
		struct mf_stack s = {
		    .depth = (uint32_t)nlabels,
		    .entry = (uint32_t)leaf->rel_pc,
		    .thread = thread,
		    .calls = leaf->calls * rate,
		    .bytes = leaf->bytes * rate,
		};
		if (r || !(s.labels = malloc((nlabels ? nlabels : 1) * sizeof(uint32_t)))) {
			r = r ? r : -ENOMEM;
			break;
		}
		size_t at = 0;
		for (size_t k = depth; k-- > 0;) {
			const struct mf_node_labels *l = &memo[path[k]];
			memcpy(s.labels + at, pool.ids + l->first, l->count * sizeof(uint32_t));
			at += l->count;
		}
		if ((r = mf_push_stack(set, &s))) {
			free(s.labels);
			break;
		}
		set->threads[thread].calls += s.calls;
		set->threads[thread].bytes += s.bytes;
		set->calls += s.calls;
		set->bytes += s.bytes;
		set->entry_calls[s.entry] += s.calls;
		set->entry_bytes[s.entry] += s.bytes;
	}
	free(memo);
	free(path);
	free(pool.ids);
	return r;
}

int mf_stacks_build(struct mf_stackset *set, const struct mf_profile *profiles, size_t count,
		    struct mf_symbolizer *sym, enum mf_label_style style, int full_names)
{
	memset(set, 0, sizeof(*set));
	set->full_names = full_names;
	int r;
	for (int e = 0; e < MF_ENTRY_COUNT; e++)
		if ((r = mf_label(set, mf_entry_names[e], &set->entry_label[e])))
			return r;
	set->threads = calloc(count ? count : 1, sizeof(*set->threads));
	if (!set->threads)
		return -ENOMEM;
	set->nthreads = count;
	for (size_t i = 0; i < count; i++) {
		const struct mf_profile *p = &profiles[i];
		set->threads[i].profile = p;
		set->lost += p->header.calls_lost;
		set->nested += p->header.calls_nested;
		set->seen += p->header.calls_total;
		set->incomplete += !p->complete;
		set->estimated |= p->header.sample_rate > 1;
		if ((r = mf_stacks_profile(set, p, (uint32_t)i, sym, style)))
			return r;
	}
	return 0;
}

uint32_t mf_stack_site(const struct mf_stackset *set, const struct mf_stack *s)
{
	return s->depth ? s->labels[s->depth - 1] : set->entry_label[s->entry];
}

void mf_stacks_free(struct mf_stackset *set)
{
	for (size_t i = 0; i < set->count; i++)
		free(set->stacks[i].labels);
	free(set->stacks);
	struct mf_label_entry *e, *tmp;
	HASH_ITER (hh, set->label_index, e, tmp) {
		HASH_DEL(set->label_index, e);
		free(e);
	}
	free(set->labels);
	free(set->threads);
	memset(set, 0, sizeof(*set));
}
