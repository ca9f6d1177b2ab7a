/* Tag scopes with counts known by construction. 4 threads, thread i = 1..4: inside "request",
 * K*i calls at site_a, then inside "request" > "parse" 2*K*i at site_b, inside "request" >
 * "render" 3*K*i at site_c; then K at site_d outside any tag. Then main takes snapshot "mid",
 * makes K calls at site_e inside "late", and inside 20 nested tags t0..t19 (16 are kept) 5
 * calls at site_deep, inside a 100-byte name (cut to 63) 7 at site_long, and 3 at site_pop
 * after a pop without a push. Usage: prog_tags K */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_freq.h"
#include "prog.h"

SITE(site_a, 16)
SITE(site_b, 32)
SITE(site_c, 48)
SITE(site_d, 64)
SITE(site_e, 80)
SITE(site_deep, 96)
SITE(site_long, 112)
SITE(site_pop, 128)

static long k;

static void repeat(void (*site)(void), long n)
{
	for (long i = 0; i < n; i++)
		site();
}

static void *worker(void *arg)
{
	long i = (long)arg;
	malloc_freq_tag_push("request");
	repeat(site_a, k * i);
	malloc_freq_tag_push("parse");
	repeat(site_b, 2 * k * i);
	malloc_freq_tag_pop();
	malloc_freq_tag_push("render");
	repeat(site_c, 3 * k * i);
	malloc_freq_tag_pop();
	malloc_freq_tag_pop();
	repeat(site_d, k);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	k = atol(argv[1]);
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (malloc_freq_snapshot("mid") < 0)
		return 1;
	malloc_freq_tag_push("late");
	repeat(site_e, k);
	malloc_freq_tag_pop();
	char name[8];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		malloc_freq_tag_push(name);
	}
	repeat(site_deep, 5);
	for (int i = 0; i < 20; i++)
		malloc_freq_tag_pop();
	char longname[101];
	memset(longname, 'x', 100);
	longname[100] = 0;
	malloc_freq_tag_push(longname);
	repeat(site_long, 7);
	malloc_freq_tag_pop();
	malloc_freq_tag_pop(); /* (none pushed: nothing happens) */
	repeat(site_pop, 3);
	return 0;
}
