/* malloc_freq demo: a program that steers the profiler. Run with MALLOC_FREQ_START=off: its
 * start-up (reading a configuration) is not recorded; it enables recording for its two phases
 * of interest, loading records and then indexing them, each in a tag scope ("load",
 * "index"), takes a labelled snapshot after each, and disables recording for its teardown.
 * Linked with -lmalloc_freq_api, it runs the same without the profiler. mf_print --tags
 * shows the two phases side by side, --list names the snapshots, --since loaded shows the
 * indexing alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_freq.h"

#define RECORDS 20000

struct record {
	char *key;
	char *value;
};

static char **read_config(int lines)
{
	char **conf = malloc((size_t)lines * sizeof(*conf));
	for (int i = 0; i < lines; i++) {
		char line[32];
		snprintf(line, sizeof(line), "option%d = %d", i, i * 7);
		conf[i] = strdup(line);
	}
	return conf;
}

static struct record *load_records(int n)
{
	struct record *r = calloc((size_t)n, sizeof(*r));
	for (int i = 0; i < n; i++) {
		char buf[48];
		snprintf(buf, sizeof(buf), "key-%08d", i * 2654435761u % 100000000u);
		r[i].key = strdup(buf);
		snprintf(buf, sizeof(buf), "value of record %d", i);
		r[i].value = strdup(buf);
	}
	return r;
}

/* A hash index that grows by doubling, rehashing everything each time. */
static size_t build_index(const struct record *r, int n)
{
	size_t cap = 8, used = 0, moves = 0;
	const struct record **slots = calloc(cap, sizeof(*slots));
	for (int i = 0; i < n; i++) {
		if (2 * (used + 1) > cap) {
			const struct record **bigger = calloc(cap * 2, sizeof(*bigger));
			for (size_t k = 0; k < cap; k++)
				if (slots[k]) {
					size_t h = strlen(slots[k]->key) * 31 + k;
					while (bigger[h % (cap * 2)])
						h++;
					bigger[h % (cap * 2)] = slots[k];
					moves++;
				}
			free(slots);
			slots = bigger;
			cap *= 2;
		}
		size_t h = (size_t)i * 2654435761u;
		while (slots[h % cap])
			h++;
		slots[h % cap] = &r[i];
		used++;
	}
	free(slots);
	return moves;
}

int main(void)
{
	char **conf = read_config(500);
	malloc_freq_enable();
	malloc_freq_tag_push("load");
	struct record *r = load_records(RECORDS);
	malloc_freq_tag_pop();
	int loaded = malloc_freq_snapshot("loaded");
	malloc_freq_tag_push("index");
	size_t moves = build_index(r, RECORDS);
	malloc_freq_tag_pop();
	int indexed = malloc_freq_snapshot("indexed");
	malloc_freq_disable();
	for (int i = 0; i < RECORDS; i++) {
		free(r[i].key);
		free(r[i].value);
	}
	free(r);
	for (int i = 0; i < 500; i++)
		free(conf[i]);
	free(conf);
	const char *dir = malloc_freq_dir();
	printf("api_demo: %d records, %zu moves while indexing; snapshots %d and %d in %s\n",
	       RECORDS, moves, loaded, indexed, dir ? dir : "(not profiled)");
	return 0;
}
