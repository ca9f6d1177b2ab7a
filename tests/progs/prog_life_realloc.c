/* realloc racing other threads for its old block's address (tests/preload/t_life_realloc.sh): blocks
 * are mapped (M_MMAP_THRESHOLD 64 KiB), so an address realloc frees goes at once to another
 * thread's malloc of the same size. One thread allocates N blocks at site_resized and first
 * asks realloc for more than can be had (the call fails; the block lives on), then either
 * reallocs it to 0 (glibc frees it) or, with "move", to twice its size at site_moved and
 * frees that. M threads meanwhile allocate and free blocks at site_other until it is done.
 * Every block is freed: none leaked, no free of an unknown block.
 * Usage: prog_life_realloc N M [move] */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define SIZE	 (200 << 10)

static long n;
static int move;
static volatile int done;

NOINLINE static void *site_resized(void)
{
	void *volatile p = malloc(SIZE);
	return p;
}

NOINLINE static void *site_moved(void *p)
{
	void *volatile q = realloc(p, 2 * SIZE);
	return q;
}

NOINLINE static void *site_other(void)
{
	void *volatile p = malloc(SIZE + 16);
	return p;
}

static void *resize(void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++) {
		void *p = site_resized();
		if (!p || realloc(p, SIZE_MAX / 2)) /* (fails: p stays as it was) */
			abort();
		if (move) {
			free(site_moved(p));
		} else {
			void *volatile q = realloc(p, 0);
			(void)q;
		}
	}
	done = 1;
	return NULL;
}

static void *other(void *arg)
{
	(void)arg;
	while (!done)
		free(site_other());
	return NULL;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 10000;
	int m = argc > 2 ? atoi(argv[2]) : 2;
	move = argc > 3 && !strcmp(argv[3], "move");
	if (n < 1 || m < 1 || m > 16)
		return 2;
	mallopt(M_MMAP_THRESHOLD, 64 << 10);
	pthread_t r, t[16];
	for (int i = 0; i < m; i++)
		if (pthread_create(&t[i], NULL, other, NULL))
			return 1;
	if (pthread_create(&r, NULL, resize, NULL) || pthread_join(r, NULL))
		return 1;
	for (int i = 0; i < m; i++)
		if (pthread_join(t[i], NULL))
			return 1;
	return 0;
}
