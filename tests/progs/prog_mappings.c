/* Live threads and the process's memory mappings (vm.max_map_count bounds them):
 *   count K   main calls site_map once, counts the lines of /proc/self/maps, starts K threads
 *             that call site_map once each and wait, and counts again; prints
 *             "mappings: B before, A with K threads"
 *   many N    main starts up to N threads with 64 KiB stacks that call site_map once each
 *             and wait until all are started; prints "many: C of N threads started"
 * Usage: prog_mappings count K | prog_mappings many N */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "prog.h"

SITE(site_map, 16)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, ready = PTHREAD_COND_INITIALIZER;
static int started, released;

static void *waiter(void *arg)
{
	(void)arg;
	site_map();
	pthread_mutex_lock(&lock);
	started++;
	pthread_cond_signal(&ready);
	while (!released)
		pthread_cond_wait(&go, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int maps_lines(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;
	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 50, made = 0;
	int count = !strcmp(mode, "count");
	if (!count && strcmp(mode, "many"))
		return 2;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 65536);
	site_map();
	int before = count ? maps_lines() : 0;
	while (made < n && pthread_create(&t[made], count ? NULL : &attr, waiter, NULL) == 0)
		made++;
	pthread_mutex_lock(&lock);
	while (started < made)
		pthread_cond_wait(&ready, &lock);
	pthread_mutex_unlock(&lock);
	int after = count ? maps_lines() : 0;
	pthread_mutex_lock(&lock);
	released = 1;
	pthread_cond_broadcast(&go);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	if (count)
		printf("mappings: %d before, %d with %d threads\n", before, after, made);
	else
		printf("many: %d of %d threads started\n", made, n);
	return 0;
}
