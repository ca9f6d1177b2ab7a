/* Lifetimes under sampling, with every figure known by construction: 4 threads, each
 *   site_temp    T blocks of 32 bytes, each freed at once (lifetimes of well under 1 ms)
 *   site_leak    B blocks of 100 bytes, kept to exit: leaked
 *   site_long    B blocks of 200 bytes, freed 20 ms after the peak was left
 *   site_small   B blocks of 12 bytes, freed after the peak (about 1% of its bytes)
 *   site_big     B blocks of 768 bytes, freed after the peak
 *   site_edge    one block of 64 KiB, the last allocation before the peak
 * then all 4 wait for each other (the process's peak of live bytes: every block above but
 * site_temp's), thread 0 frees its site_edge block, then its site_big blocks,
 * while the others wait (the peak is left, by one thread), and then each frees the
 * rest of its site_edge, site_small, site_big blocks; site_long's 20 ms later.
 * Usage: prog_life_sample T B */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define NO_TAIL	 __asm__ volatile("" ::: "memory") /* after a call: keep the site's frame */
#define THREADS	 4

static long t_temp, b_blocks;
static pthread_barrier_t at_peak, left_peak;
static void *volatile sink;

extern void *__libc_malloc(size_t);

#define KEEP(name, size)                                                                           \
	NOINLINE static void *name(void)                                                           \
	{                                                                                          \
		void *q = malloc(size);                                                            \
		if (!q)                                                                            \
			abort();                                                                   \
		NO_TAIL;                                                                           \
		return q;                                                                          \
	}
KEEP(site_leak, 100)
KEEP(site_long, 200)
KEEP(site_small, 12)
KEEP(site_big, 768)
KEEP(site_edge, 64 << 10)

NOINLINE static void site_temp(void)
{
	void *p = malloc(32);
	sink = p;
	free(p);
}

/* (the profiler does not see these arrays: they are in no figure) */
static void **blocks(void)
{
	void **v = __libc_malloc((size_t)(b_blocks + 1) * sizeof(void *));
	if (!v)
		abort();
	return v;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	void **lng = blocks(), **small = blocks(), **big = blocks();
	for (long i = 0; i < t_temp; i++)
		site_temp();
	for (long i = 0; i < b_blocks; i++) {
		sink = site_leak();
		lng[i] = site_long();
		small[i] = site_small();
		big[i] = site_big();
	}
	void *edge = site_edge();
	pthread_barrier_wait(&at_peak);
	if (id == 0) {
		free(edge);
		for (long i = 0; i < b_blocks; i++)
			free(big[i]);
	}
	pthread_barrier_wait(&left_peak);
	if (id) {
		free(edge);
		for (long i = 0; i < b_blocks; i++)
			free(big[i]);
	}
	for (long i = 0; i < b_blocks; i++)
		free(small[i]);
	struct timespec wait = {0, 20 * 1000 * 1000};
	nanosleep(&wait, NULL);
	for (long i = 0; i < b_blocks; i++)
		free(lng[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	t_temp = atol(argv[1]), b_blocks = atol(argv[2]);
	pthread_barrier_init(&at_peak, NULL, THREADS);
	pthread_barrier_init(&left_peak, NULL, THREADS);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i))
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
