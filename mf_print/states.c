/* The states a profile went through (states.h): one model per snapshot number and one of the
 * live files, each loaded as --snapshot N and --since 0 load theirs. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "states.h"

static int mf_states_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One state: the snapshot named spec (NULL: the live files whole) into the next slot of s;
 * a state of which nothing could be read is dropped. */
static int mf_states_one(struct mf_states *s, uint64_t number, const struct mf_found_list *found,
			 const struct mf_load *like, struct mf_symbolizer *sym)
{
	char spec[24];
	snprintf(spec, sizeof(spec), "%" PRIu64, number);
	struct mf_load ld = {.have_thread = like->have_thread,
			     .thread = like->thread,
			     .process = like->process,
			     .nprocess = like->nprocess,
			     .top = number ? spec : NULL,
			     .whole = 1};
	struct mf_state_model *st = &s->v[s->count];
	st->number = number;
	int r = mf_model_init(&st->m, sym);
	st->m.short_buckets = 0;
	for (size_t i = 0; !r && i < found->count; i++)
		r = mf_load_dir(&st->m, &found->v[i], &ld);
	if (!r)
		r = mf_model_finish(&st->m);
	if (!r && ld.threads && !ld.failed)
		s->count++;
	else
		mf_model_free(&st->m);
	ld.process = NULL; /* (not its own) */
	ld.nprocess = 0;
	mf_load_free(&ld);
	return r;
}

int mf_states_load(struct mf_states *s, const struct mf_model *m, const struct mf_found_list *found,
		   const struct mf_load *like, struct mf_symbolizer *sym)
{
	size_t n = 0;
	*s = (struct mf_states){0};
	for (size_t i = 0; i < m->nprocesses; i++)
		n += m->processes[i].nsnaps;
	if (!n)
		return 0;
	uint64_t *numbers = malloc(n * sizeof(*numbers));
	if (!numbers)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < m->nprocesses; i++)
		for (uint32_t k = 0; k < m->processes[i].nsnaps; k++)
			numbers[n++] = m->processes[i].snaps[k].number;
	qsort(numbers, n, sizeof(*numbers), mf_states_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (numbers[i] && (!u || numbers[u - 1] != numbers[i]))
			numbers[u++] = numbers[i];
	if (u > MF_STATES_MAX) {
		s->skipped = u - MF_STATES_MAX;
		u = MF_STATES_MAX;
	}
	int r = (s->v = calloc(u + 1, sizeof(*s->v))) ? 0 : -ENOMEM;
	for (size_t i = 0; i < u && !r; i++)
		r = mf_states_one(s, numbers[i], found, like, sym);
	if (!r)
		r = mf_states_one(s, 0, found, like, sym);
	free(numbers);
	if (r)
		mf_states_free(s);
	return r;
}

void mf_states_free(struct mf_states *s)
{
	for (size_t i = 0; i < s->count; i++)
		mf_model_free(&s->v[i].m);
	free(s->v);
	*s = (struct mf_states){0};
}
