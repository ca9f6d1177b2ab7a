/* Collapsed stacks for flamegraph.pl and speedscope: "outermost;...;caller;malloc COUNT", one
 * line per distinct stack after symbolization, sorted, no profiler frames. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#undef uthash_fatal
#define uthash_fatal(msg) return -ENOMEM
#include <uthash.h>

#include "report.h"

struct mf_line {
	UT_hash_handle hh;
	uint64_t count;
	char text[];
};

static int mf_line_cmp(const void *a, const void *b)
{
	return strcmp((*(struct mf_line *const *)a)->text, (*(struct mf_line *const *)b)->text);
}

static int mf_line_add(struct mf_line **lines, const char *text, size_t len, uint64_t count)
{
	struct mf_line *l;
	HASH_FIND(hh, *lines, text, len, l);
	if (!l) {
		if (!(l = calloc(1, sizeof(*l) + len + 1)))
			return -ENOMEM;
		memcpy(l->text, text, len + 1);
		HASH_ADD(hh, *lines, text, len, l);
	}
	l->count += count;
	return 0;
}

int mf_report_collapsed(FILE *out, const struct mf_stackset *set, int bytes)
{
	struct mf_line *lines = NULL, *l, *tmp;
	char *buf = NULL;
	size_t cap = 0;
	int r = 0;
	for (size_t i = 0; i < set->count && !r; i++) {
		const struct mf_stack *s = &set->stacks[i];
		uint64_t count = bytes ? s->bytes : s->calls;
		if (!count)
			continue;
		size_t need = strlen(mf_entry_names[s->entry]) + 1;
		for (uint32_t k = 0; k < s->depth; k++)
			need += strlen(set->labels[s->labels[k]]) + 1;
		if (need > cap) {
			char *b = realloc(buf, need * 2);
			if (!b) {
				r = -ENOMEM;
				break;
			}
			buf = b;
			cap = need * 2;
		}
		size_t at = 0;
		for (uint32_t k = 0; k < s->depth; k++) {
			const char *t = set->labels[s->labels[k]];
			size_t n = strlen(t);
			memcpy(buf + at, t, n);
			at += n;
			buf[at++] = ';';
		}
		strcpy(buf + at, mf_entry_names[s->entry]);
		at += strlen(mf_entry_names[s->entry]);
		r = mf_line_add(&lines, buf, at, count);
	}
	size_t n = HASH_COUNT(lines), k = 0;
	struct mf_line **v = r ? NULL : malloc((n ? n : 1) * sizeof(*v));
	if (!r && !v)
		r = -ENOMEM;
	if (!r) {
		for (l = lines; l; l = l->hh.next)
			v[k++] = l;
		qsort(v, n, sizeof(*v), mf_line_cmp);
		for (k = 0; k < n; k++)
			fprintf(out, "%s %" PRIu64 "\n", v[k]->text, v[k]->count);
	}
	free(v);
	free(buf);
	HASH_ITER (hh, lines, l, tmp) {
		HASH_DEL(lines, l);
		free(l);
	}
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
