/* Benchmark workload, the profiler's worst case: THREADS threads that do nothing but malloc
 * and free small blocks, from four call sites at four stack depths.
 * Usage: bench_alloc [threads] [iterations per thread] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long iterations;
static __thread void *volatile sink;

#define NOINLINE __attribute__((noinline))

NOINLINE static void site_a(size_t n)
{
	sink = malloc(n);
	free(sink);
}
NOINLINE static void site_b(size_t n)
{
	sink = malloc(n + 16);
	free(sink);
}
NOINLINE static void site_c(size_t n)
{
	sink = calloc(1, n + 32);
	free(sink);
}
NOINLINE static void site_d(size_t n)
{
	sink = malloc(n + 48);
	free(sink);
}

/* Recursion gives the sites distinct stack depths (5, 10, 15, 20 frames above them). */
NOINLINE static void descend(int depth, long i)
{
	if (depth > 0) {
		descend(depth - 1, i);
		__asm__ volatile("" ::: "memory"); /* keep the frame: no tail call */
		return;
	}
	switch (i & 3) {
	case 0:
		site_a(16 + (i & 63));
		break;
	case 1:
		site_b(8);
		break;
	case 2:
		site_c(24);
		break;
	default:
		site_d(40);
		break;
	}
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++)
		descend(5 * (1 + (int)((i >> 2) & 3)), i);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	iterations = argc > 2 ? atol(argv[2]) : 1000000;
	pthread_t t[64];
	if (threads < 1 || threads > 64)
		return 2;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("bench_alloc: %d threads x %ld malloc+free\n", threads, iterations);
	return 0;
}
