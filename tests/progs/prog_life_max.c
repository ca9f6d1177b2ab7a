/* Each stack's most live at once and its blocks' lifetimes, known by construction (lifetimes
 * on; K, S, J, T, C, H from the command line):
 *   site_rounds   rounds of K, K - 2, K - 4, ... (while > 0) blocks of S bytes, each round
 *                 freed whole before the next: at most K blocks (K * S bytes) live at once
 *   site_slow     J blocks of 8192 bytes, one at a time, each freed T ms after it was made:
 *                 at most 1 block (8192 bytes) live, each living at least T ms
 *   site_quick    C blocks of 64 bytes, each freed at once: at most 1 block (64 bytes)
 *   site_handed   H blocks of 32 bytes handed to a thread that frees them all, then (once it
 *                 has ended) H more, freed by main: frees by another thread count, so at most
 *                 H blocks (32 H bytes) live at once, as main saw them
 * Usage: prog_life_max K S J T C H */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define NO_TAIL	 __asm__ volatile("" ::: "memory") /* after a call: keep the site's frame */

static void *volatile sink;

NOINLINE static void *site_rounds(size_t s)
{
	void *p = malloc(s);
	NO_TAIL;
	return p;
}

NOINLINE static void *site_slow(void)
{
	void *p = malloc(8192);
	NO_TAIL;
	return p;
}

NOINLINE static void site_quick(void)
{
	void *p = malloc(64);
	sink = p;
	free(p);
}

NOINLINE static void *site_handed(void)
{
	void *p = malloc(32);
	NO_TAIL;
	return p;
}

static void *free_all(void *arg)
{
	void **v = arg;
	for (long i = 0; v[i]; i++)
		free(v[i]);
	return NULL;
}

/* h blocks of site_handed into v, freed by a thread of their own (round 0) or by this one */
NOINLINE static int handed(void **v, long h, int round)
{
	for (long i = 0; i < h; i++)
		v[i] = site_handed();
	v[h] = NULL;
	pthread_t th;
	if (round > 0)
		free_all(v);
	else if (pthread_create(&th, NULL, free_all, v) || pthread_join(th, NULL))
		return -1;
	return 0;
}

static volatile int rounds = 2;

int main(int argc, char **argv)
{
	if (argc != 7)
		return 2;
	long k = atol(argv[1]), s = atol(argv[2]), j = atol(argv[3]), t = atol(argv[4]);
	long c = atol(argv[5]), h = atol(argv[6]);
	void **v = calloc((size_t)(k > h ? k : h) + 1, sizeof(*v));
	if (!v)
		return 1;
	for (long r = k; r > 0; r -= 2) {
		for (long i = 0; i < r; i++)
			v[i] = site_rounds((size_t)s);
		for (long i = 0; i < r; i++)
			free(v[i]);
	}
	struct timespec ts = {t / 1000, t % 1000 * 1000000};
	for (long i = 0; i < j; i++) {
		void *p = site_slow();
		while (nanosleep(&ts, &ts))
			;
		ts = (struct timespec){t / 1000, t % 1000 * 1000000};
		free(p);
	}
	for (long i = 0; i < c; i++)
		site_quick();
	for (int round = 0; round < rounds; round++) /* (one call: one stack, both rounds) */
		if (handed(v, h, round))
			return 1;
	free(v);
	return 0;
}
