/* malloc_freq demo: four worker threads format log records. Three habits common in real code
 * call malloc far more often than needed:
 *   append_char()   grows a string one byte at a time with realloc
 *   split_words()   strdup()s every token it finds, then frees them
 *   format_record() builds each record in a fresh heap buffer
 * and one function, format_record_reused(), does the same work with one buffer per thread.
 * Run it under the profiler and look at which call stacks dominate the report. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKERS 4
#define RECORDS 20000

static char *append_char(char *s, size_t *len, char c)
{
	char *t = realloc(s, *len + 2); /* one realloc per character */
	if (!t) {
		free(s);
		return NULL;
	}
	t[(*len)++] = c;
	t[*len] = 0;
	return t;
}

static size_t split_words(const char *line)
{
	char *copy = strdup(line), *save = NULL;
	size_t n = 0;
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *word = strdup(w); /* a heap copy per token */
		n += strlen(word);
		free(word);
	}
	free(copy);
	return n;
}

static size_t format_record(int worker, int i)
{
	char *buf = malloc(128);
	if (!buf)
		return 0;
	int n = snprintf(buf, 128, "worker %d record %d status ok", worker, i);
	size_t len = 0;
	char *line = NULL;
	for (int k = 0; k < n && (line || k == 0); k++)
		line = append_char(line, &len, buf[k]);
	size_t words = line ? split_words(line) : 0;
	free(line);
	free(buf);
	return words;
}

static size_t format_record_reused(char *buf, size_t size, int worker, int i)
{
	return (size_t)snprintf(buf, size, "worker %d record %d status ok", worker, i);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	size_t total = 0;
	char buf[128];
	for (int i = 0; i < RECORDS; i++) {
		total += format_record(id, i);
		total += format_record_reused(buf, sizeof(buf), id, i);
	}
	return (void *)total;
}

int main(void)
{
	pthread_t t[WORKERS];
	for (long i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	size_t total = 0;
	for (int i = 0; i < WORKERS; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (size_t)r;
	}
	printf("threads_demo: %d workers formatted %d records (%zu bytes of words)\n", WORKERS,
	       WORKERS * RECORDS, total);
	return 0;
}
