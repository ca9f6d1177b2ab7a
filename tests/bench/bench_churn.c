/* Benchmark workload of lifetimes: THREADS threads (default 2) each run ROUNDS rounds of
 * 3 mallocs through a 3-deep chain, a calloc, a realloc pair (growing, then shrinking) and a
 * strdup, every block freed by the thread that made it within its round.
 * Usage: bench_churn [threads] [rounds per thread] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define NO_TAIL	 __asm__ volatile("" ::: "memory")

static long rounds;
static __thread void *volatile sink;

NOINLINE static void *chain3(size_t n)
{
	void *p = malloc(n);
	NO_TAIL;
	return p;
}
NOINLINE static void *chain2(size_t n)
{
	void *p = chain3(n);
	NO_TAIL;
	return p;
}
NOINLINE static void *chain1(size_t n)
{
	void *p = chain2(n);
	NO_TAIL;
	return p;
}

NOINLINE static void round_(long i)
{
	void *a = chain1(16 + (size_t)(i & 31));
	void *b = chain1(48);
	void *c = chain1(100 + (size_t)(i & 7));
	void *d = calloc(4, 24);
	void *e = malloc(32);
	e = realloc(e, 200);
	e = realloc(e, 64);
	char *s = strdup("a string of some length");
	sink = s;
	free(b);
	free(a);
	free(s);
	free(e);
	free(d);
	free(c);
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++)
		round_(i);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atol(argv[2]) : 1000000;
	if (threads <= 1) {
		worker(NULL);
		return 0;
	}
	pthread_t t[64];
	threads = threads > 64 ? 64 : threads;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
