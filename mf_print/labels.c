/* Rendering the model's frames as label texts (see labels.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "labels.h"
#include "names.h"

static const char *mf_basename(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void mf_frame_text(char *buf, size_t size, const struct mf_model *m,
			  const struct mf_frame *f, enum mf_label_style style, int full_names)
{
	if (f->kind == MF_FRAME_ENTRY) {
		snprintf(buf, size, "%s", mf_entry_names[f->offset]);
		return;
	}
	if (f->kind == MF_FRAME_TRUNCATED) {
		snprintf(buf, size, "[truncated stack]");
		return;
	}
	if (f->kind == MF_FRAME_TAG) {
		snprintf(buf, size, "[tag] %s", f->function);
		return;
	}
	if (f->kind == MF_FRAME_JIT) {
		snprintf(buf, size, "[jit]"); /* (the summary counts them) */
		return;
	}
	char name[4096];
	const char *fn = f->function;
	if (!fn) {
		snprintf(buf, size, "%s+0x%" PRIx64, m->modules[f->module].base, f->offset);
		return;
	}
	if (!full_names && fn[0] != '[' &&
	    (f->lang != MF_LANG_C || strchr(fn, '<') || strchr(fn, '(') || strchr(fn, '.'))) {
		mf_name_simplify(fn, f->lang, name, sizeof(name));
		if (name[0])
			fn = name;
	}
	int inlined = f->inlined_into != MF_NONE;
	if (style == MF_LABEL_FUNCTION || !f->file)
		snprintf(buf, size, "%s%s", fn,
			 style == MF_LABEL_LINE && inlined ? " [inlined]" : "");
	else
		snprintf(buf, size, "%s%s %s:%u", fn, inlined ? " [inlined]" : "",
			 mf_basename(f->file), f->line);
}

static uint64_t mf_label_rehash(const void *ctx, uint32_t id)
{
	return mf_hash_str(((const struct mf_labels *)ctx)->text[id]);
}

int mf_labels_add(struct mf_labels *l, const char *raw, uint32_t *id)
{
	char text[8192];
	if (l->clean)
		l->clean(raw, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "%s", raw);
	uint64_t hash = mf_hash_str(text);
	for (size_t at = mf_idset_first(&l->set, hash); l->set.slot[at] != MF_IDSET_EMPTY;
	     at = mf_idset_next(&l->set, at)) {
		if (!strcmp(l->text[l->set.slot[at]], text)) {
			*id = l->set.slot[at];
			return 0;
		}
	}
	size_t cap = l->cap;
	char **v = mf_array_room(l->text, l->count, &cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->text = v;
	uint32_t *len = cap == l->cap ? l->len : realloc(l->len, cap * sizeof(*len));
	if (!len)
		return -ENOMEM;
	l->len = len;
	l->cap = cap;
	if (mf_idset_room(&l->set, mf_label_rehash, l) || !(l->text[l->count] = strdup(text)))
		return -ENOMEM;
	l->len[l->count] = (uint32_t)strlen(text);
	*id = (uint32_t)l->count++;
	mf_idset_put(&l->set, hash, *id);
	return 0;
}

int mf_labels_build(struct mf_labels *l, const struct mf_model *m, enum mf_label_style style,
		    int full_names, void (*clean)(const char *in, char *out, size_t size))
{
	memset(l, 0, sizeof(*l));
	l->clean = clean;
	l->of_frame = malloc((m->nframes ? m->nframes : 1) * sizeof(*l->of_frame));
	if (!l->of_frame || mf_idset_init(&l->set, 1024))
		return -ENOMEM;
	char text[8192];
	for (size_t i = 0; i < m->nframes; i++) {
		mf_frame_text(text, sizeof(text), m, &m->frames[i], style, full_names);
		int r = mf_labels_add(l, text, &l->of_frame[i]);
		if (r)
			return r;
	}
	/* Programs: after the frames, so a new label means a new program. */
	l->of_process = malloc((m->nprocesses ? m->nprocesses : 1) * sizeof(*l->of_process));
	if (!l->of_process)
		return -ENOMEM;
	for (size_t i = 0; i < m->nprocesses; i++) {
		size_t before = l->count;
		snprintf(text, sizeof(text), "[%s]", m->processes[i].name);
		int r = mf_labels_add(l, text, &l->of_process[i]);
		if (r)
			return r;
		l->programs += l->count > before;
	}
	return 0;
}

static const struct mf_labels *mf_rank_labels;
static int mf_rank_cmp(const void *a, const void *b)
{
	return strcmp(mf_rank_labels->text[*(const uint32_t *)a],
		      mf_rank_labels->text[*(const uint32_t *)b]);
}

int mf_labels_rank(struct mf_labels *l)
{
	uint32_t *order = malloc((l->count ? l->count : 1) * sizeof(*order));
	free(l->rank);
	l->rank = malloc((l->count ? l->count : 1) * sizeof(*l->rank));
	if (!order || !l->rank) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->count; i++)
		order[i] = (uint32_t)i;
	mf_rank_labels = l;
	qsort(order, l->count, sizeof(*order), mf_rank_cmp);
	for (size_t i = 0; i < l->count; i++)
		l->rank[order[i]] = (uint32_t)i;
	free(order);
	return 0;
}

void mf_labels_free(struct mf_labels *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->text[i]);
	free(l->text);
	free(l->len);
	free(l->of_frame);
	free(l->rank);
	free(l->of_process);
	free(l->set.slot);
	memset(l, 0, sizeof(*l));
}
