/* Profiles for mf_print's benchmark, of shapes real programs reach: many threads, or millions
 * of distinct stacks. Usage:
 *   bench_print_prog threads N   N threads (50 at a time), each 100 calls from 20 call paths
 *   bench_print_prog stacks N    N distinct stacks, each one call: paths through 3 call sites
 *                                at each of ceil(log3 N) levels, 3 frames per level */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

__attribute__((noinline)) static void leaf(size_t n)
{
	sink = malloc(n);
	free(sink);
}

/* ---- threads: a few call paths per thread ---- */
__attribute__((noinline)) static void path_a(int i)
{
	leaf(16 + (size_t)i);
}
__attribute__((noinline)) static void path_b(int i)
{
	path_a(i);
	leaf(32);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int k = 0; k < 5; k++)
		for (int i = 0; i < 10; i++)
			i % 2 ? path_a(i) : path_b(i);
	return NULL;
}

static int threads(long n)
{
	while (n > 0) {
		pthread_t t[50];
		int batch = n < 50 ? (int)n : 50;
		for (int i = 0; i < batch; i++)
			if (pthread_create(&t[i], NULL, worker, NULL))
				return 1;
		for (int i = 0; i < batch; i++)
			pthread_join(t[i], NULL);
		n -= batch;
	}
	return 0;
}

/* ---- stacks: digit d of the path picks one of three call sites at each level ---- */
static void level(int depth, unsigned long path);
__attribute__((noinline)) static void hop(int depth, unsigned long path)
{
	level(depth, path);
	__asm__ volatile("" ::: "memory"); /* not a tail call: its frame stays on the stack */
}
__attribute__((noinline)) static void via0(int depth, unsigned long path)
{
	hop(depth, path);
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void via1(int depth, unsigned long path)
{
	hop(depth, path);
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void via2(int depth, unsigned long path)
{
	hop(depth, path);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void level(int depth, unsigned long path)
{
	if (depth == 0) {
		leaf(8);
		return;
	}
	switch (path % 3) {
	case 0:
		via0(depth - 1, path / 3);
		break;
	case 1:
		via1(depth - 1, path / 3);
		break;
	default:
		via2(depth - 1, path / 3);
		break;
	}
	__asm__ volatile("" ::: "memory");
}

static int stacks(long n)
{
	int depth = 0;
	for (long c = 1; c < n; c *= 3)
		depth++;
	for (long i = 0; i < n; i++)
		level(depth, (unsigned long)i);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return threads(n);
	if (argc == 3 && !strcmp(argv[1], "stacks"))
		return stacks(n);
	fprintf(stderr, "usage: bench_print_prog threads|stacks N\n");
	return 2;
}
