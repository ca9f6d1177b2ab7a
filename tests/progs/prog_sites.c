/* Test program with counts known by construction: each of THREADS threads calls each of the
 * nine allocation entry points from its own function, SITE_CALLS(i) times with SITE_BYTES(i)
 * bytes. Prints a checksum line and exits with status 7, so a test can compare output and
 * status with and without the profiler. Usage: prog_sites [threads] */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SITE_CALLS(i) (100 * ((i) + 1))
#define SITE_BYTES(i) (64 * ((i) + 1))
#define NOINLINE      __attribute__((noinline))

static __thread void *volatile sink; /* per thread: keep() must free what it stored */

static void keep(void *p)
{
	sink = p;
	free(sink);
}

NOINLINE static void site_malloc(size_t n)
{
	keep(malloc(n));
}
NOINLINE static void site_calloc(size_t n)
{
	keep(calloc(n / 8, 8));
}
NOINLINE static void site_realloc(size_t n)
{
	keep(realloc(NULL, n));
}
NOINLINE static void site_reallocarray(size_t n)
{
	keep(reallocarray(NULL, n / 4, 4));
}
NOINLINE static void site_posix_memalign(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, n) == 0)
		keep(p);
}
NOINLINE static void site_aligned_alloc(size_t n)
{
	keep(aligned_alloc(64, n));
}
NOINLINE static void site_memalign(size_t n)
{
	keep(memalign(64, n));
}
NOINLINE static void site_valloc(size_t n)
{
	keep(valloc(n));
}
NOINLINE static void site_pvalloc(size_t n)
{
	keep(pvalloc(n));
}

static void (*const sites[9])(size_t) = {
    site_malloc,	site_calloc,   site_realloc, site_reallocarray, site_posix_memalign,
    site_aligned_alloc, site_memalign, site_valloc,  site_pvalloc,
};

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 9; i++)
		for (int k = 0; k < SITE_CALLS(i); k++)
			sites[i](SITE_BYTES(i));
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 3;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	unsigned long sum = 0;
	for (int i = 0; i < 9; i++)
		sum += (unsigned long)SITE_CALLS(i) * SITE_BYTES(i) * n;
	printf("prog_sites: %d threads, %lu bytes requested\n", n, sum);
	return 7;
}
