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

/* ---- file names: the base name, or as many directories more as tell two files apart ----- */

/* The file names of the model's frames, each distinct one once, in strcmp order, with the
 * tail of each that a label shows. */
struct mf_files {
	const char **path, **shown;
	size_t count;
};

static int mf_path_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *const *mf_base_paths;
static int mf_base_cmp(const void *a, const void *b)
{
	const char *x = mf_base_paths[*(const uint32_t *)a],
		   *y = mf_base_paths[*(const uint32_t *)b];
	int c = strcmp(mf_basename(x), mf_basename(y));
	return c ? c : strcmp(x, y);
}

/* The tail of path from its k-th last '/' on (the whole path when it has fewer). */
static const char *mf_path_tail(const char *path, int k)
{
	const char *at = path + strlen(path);
	while (at > path) {
		if (at[-1] == '/' && --k == 0)
			return at;
		at--;
	}
	return path;
}

/* Whether path ends in tail, a whole number of its components. */
static int mf_path_ends_in(const char *path, const char *tail)
{
	size_t lp = strlen(path), lt = strlen(tail);
	return lp >= lt && !strcmp(path + lp - lt, tail) && (lp == lt || path[lp - lt - 1] == '/');
}

/* For the files of one base name (their indexes in fl->path: group[0..n)), the shortest tail
 * of each that no other one ends in. */
static void mf_files_tell_apart(struct mf_files *fl, const uint32_t *group, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *path = fl->path[group[i]], *tail = path;
		for (int k = 1; (tail = mf_path_tail(path, k)) != path; k++) {
			size_t j = 0;
			while (j < n && (j == i || !mf_path_ends_in(fl->path[group[j]], tail)))
				j++;
			if (j == n)
				break;
		}
		fl->shown[group[i]] = tail;
	}
}

static int mf_files_build(struct mf_files *fl, const struct mf_model *m)
{
	size_t n = 0, cap = m->nframes ? m->nframes : 1;
	fl->path = malloc(cap * sizeof(*fl->path));
	fl->shown = malloc(cap * sizeof(*fl->shown));
	uint32_t *order = malloc(cap * sizeof(*order));
	if (!fl->path || !fl->shown || !order) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nframes; i++)
		if (m->frames[i].file)
			fl->path[n++] = m->frames[i].file;
	qsort(fl->path, n, sizeof(*fl->path), mf_path_cmp);
	for (size_t i = 0; i < n; i++)
		if (!fl->count || strcmp(fl->path[fl->count - 1], fl->path[i]))
			fl->path[fl->count++] = fl->path[i];
	for (size_t i = 0; i < fl->count; i++)
		order[i] = (uint32_t)i;
	mf_base_paths = fl->path;
	qsort(order, fl->count, sizeof(*order), mf_base_cmp);
	for (size_t i = 0, j; i < fl->count; i = j) {
		const char *base = mf_basename(fl->path[order[i]]);
		for (j = i + 1; j < fl->count && !strcmp(base, mf_basename(fl->path[order[j]]));
		     j++)
			;
		if (j - i == 1)
			fl->shown[order[i]] = base;
		else
			mf_files_tell_apart(fl, order + i, j - i);
	}
	free(order);
	return 0;
}

static const char *mf_files_shown(const struct mf_files *fl, const char *file)
{
	const char **at = bsearch(&file, fl->path, fl->count, sizeof(*fl->path), mf_path_cmp);
	return at ? fl->shown[at - fl->path] : mf_basename(file);
}

static void mf_files_free(struct mf_files *fl)
{
	free(fl->path);
	free(fl->shown);
	memset(fl, 0, sizeof(*fl));
}

static void mf_frame_text(char *buf, size_t size, const struct mf_model *m,
			  const struct mf_frame *f, enum mf_label_style style, int full_names,
			  const struct mf_files *fl)
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
			 mf_files_shown(fl, f->file), f->line);
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
	struct mf_files fl = {0};
	if (style == MF_LABEL_LINE && mf_files_build(&fl, m)) {
		mf_files_free(&fl);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nframes; i++) {
		mf_frame_text(text, sizeof(text), m, &m->frames[i], style, full_names, &fl);
		int r = mf_labels_add(l, text, &l->of_frame[i]);
		if (r) {
			mf_files_free(&fl);
			return r;
		}
	}
	mf_files_free(&fl);
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
