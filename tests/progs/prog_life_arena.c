/* Blocks of threads that run one after another, each in the arena the one before left (glibc
 * gives an ended thread's arena to the next thread): each of T threads allocates K blocks of
 * 40 bytes at site_relay and frees a quarter of them itself, then half of what the thread
 * before it left (a thread that has ended), and ends; main frees the rest. Every block is
 * freed once: with lifetimes, none leaked, T*K in site_relay's lifetime histogram.
 * Usage: prog_life_arena T K */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static long k;
static void **blocks; /* thread i's at [i * k, (i + 1) * k) */

NOINLINE static void *site_relay(void)
{
	void *p = malloc(40);
	__asm__ volatile("" ::: "memory");
	return p;
}

static void *run(void *arg)
{
	long i = (long)arg;
	void **mine = blocks + i * k;
	for (long j = 0; j < k; j++)
		if (!(mine[j] = site_relay()))
			abort();
	for (long j = 0; j < k; j += 4) { /* its own, a quarter */
		free(mine[j]);
		mine[j] = NULL;
	}
	if (i > 0)
		for (long j = 1; j < k; j += 2) { /* half of the ended thread's */
			free(mine[j - k]);
			mine[j - k] = NULL;
		}
	return NULL;
}

int main(int argc, char **argv)
{
	long t = argc > 2 ? atol(argv[1]) : 4;
	k = argc > 2 ? atol(argv[2]) : 1000;
	if (!(blocks = calloc((size_t)(t * k), sizeof(*blocks))))
		return 1;
	for (long i = 0; i < t; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, run, (void *)i) || pthread_join(th, NULL))
			return 1;
	}
	for (long j = 0; j < t * k; j++)
		free(blocks[j]);
	free(blocks);
	return 0;
}
