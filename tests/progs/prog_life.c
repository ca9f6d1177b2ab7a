/* What happens after malloc, with counts known by construction, in 4 threads at once (each
 * calls every site with the same counts; N, M, Z, K from the command line):
 *   site_temp      N blocks of 24 bytes, each freed at once: all temporaries
 *   site_kept      M blocks of 100 bytes kept to exit: none a temporary
 *   site_zero      Z zero-byte requests, each freed at once: Z temporaries of bucket 0
 *   site_aligned   N posix_memalign'ed blocks of 64 bytes, each freed at once: temporaries
 *   site_sizes     requests of 1, 2, 4, ... 2^11 bytes (12 buckets), M of each, freed after
 *                  another allocation (site_kept's): none a temporary
 *   site_chain     K chains: malloc(8) (site_chain), then realloc to 16, 32, ... 2^(R+3)
 *                  bytes (R = 8 reallocs, site_grow), then kept: the malloc'd block and
 *                  all but the last realloc'd one of each chain are temporaries
 *   site_shrink    K blocks of 40 bytes realloc'd to 0 (glibc frees them): K temporaries of
 *                  site_shrink, and K zero-byte realloc calls (site_shrink_call)
 *   free(NULL) after each site_temp call, which frees nothing
 * and, given Q and U (lifetimes):
 *   site_queue     Q blocks of 48 bytes passed through a queue to a consumer thread, which
 *                  frees them while the workers run: freed by another thread
 *   site_orphan    Q blocks of 56 bytes left to main, which frees them once every worker
 *                  has ended and 60 ms more have passed: freed after their thread exited,
 *                  each having lived at least 60 ms
 *   U blocks from glibc's __libc_malloc (which the profiler does not see), freed by main:
 *                  frees of unknown blocks
 *   and, given P, after the phases above: site_peak P blocks of 64 KiB, then all threads
 *   wait for each other (the process's peak of live bytes, by far), thread 0 frees one (the
 *   peak is left), they wait again, and each frees the rest: at the peak site_peak holds
 *   4P blocks, site_kept 4(M+1) and site_grow 4K, every other site none
 * Leaked at exit: site_kept's blocks and the last block of each chain (site_grow's).
 * Usage: prog_life N M Z K [Q U [P]] */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE       __attribute__((noinline))
#define NO_TAIL	       __asm__ volatile("" ::: "memory") /* after a call: keep the site's frame */
#define THREADS	       4
#define CHAIN_REALLOCS 8

static long n_temp, m_kept, z_zero, k_chain, q_queue, u_unknown, p_peak;
static pthread_barrier_t at_peak, left_peak;
static void *volatile sink;

/* The queue to the consumer, and the orphans for main. */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static void **queue, **orphans;
static long queued, consumed, orphaned;

extern void *__libc_malloc(size_t);

NOINLINE static void site_temp(void)
{
	void *p = malloc(24);
	sink = p;
	free(p);
	free(NULL);
}

NOINLINE static void *site_kept(void)
{
	void *q = malloc(100);
	NO_TAIL;
	return q;
}

NOINLINE static void site_zero(void)
{
	void *p = malloc(0);
	sink = p;
	free(p);
}

NOINLINE static void site_aligned(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, 64))
		abort();
	sink = p;
	free(p);
}

NOINLINE static void *site_sizes(size_t n)
{
	void *q = malloc(n);
	NO_TAIL;
	return q;
}

NOINLINE static void *site_chain(void)
{
	void *q = malloc(8);
	NO_TAIL;
	return q;
}

NOINLINE static void *site_grow(void *p, size_t n)
{
	void *q = realloc(p, n);
	NO_TAIL;
	return q;
}

NOINLINE static void *site_shrink(void)
{
	void *q = malloc(40);
	NO_TAIL;
	return q;
}

NOINLINE static void *site_queue(void)
{
	void *q = malloc(48);
	NO_TAIL;
	return q;
}

NOINLINE static void *site_orphan(void)
{
	void *q = malloc(56);
	NO_TAIL;
	return q;
}

static void *consumer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&queue_lock);
	while (consumed < THREADS * q_queue) {
		while (consumed == queued)
			pthread_cond_wait(&queue_cond, &queue_lock);
		void *p = queue[consumed++];
		pthread_mutex_unlock(&queue_lock);
		free(p);
		pthread_mutex_lock(&queue_lock);
	}
	pthread_mutex_unlock(&queue_lock);
	return NULL;
}

NOINLINE static void *site_peak(void)
{
	void *q = malloc(64 << 10);
	NO_TAIL;
	return q;
}

/* Allocates, waits for the others, and frees: see the peak above. */
static void peak(long id)
{
	void **blocks = __libc_malloc((size_t)(p_peak + 1) * sizeof(void *));
	if (!blocks)
		abort();
	for (long i = 0; i < p_peak; i++)
		if (!(blocks[i] = site_peak()))
			abort();
	pthread_barrier_wait(&at_peak);
	if (id == 0)
		free(blocks[0]);
	pthread_barrier_wait(&left_peak);
	for (long i = id == 0; i < p_peak; i++)
		free(blocks[i]);
}

NOINLINE static void *site_shrink_call(void *p)
{
	void *q = realloc(p, 0);
	NO_TAIL;
	return q;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	for (long i = 0; i < n_temp; i++)
		site_temp();
	for (long i = 0; i < m_kept; i++)
		if (!(sink = site_kept()))
			abort();
	for (long i = 0; i < z_zero; i++)
		site_zero();
	for (long i = 0; i < n_temp; i++)
		site_aligned();
	void **sized = malloc((size_t)(12 * m_kept + 1) * sizeof(void *)); /* (not a site) */
	long nsized = 0;
	for (int b = 0; b < 12; b++)
		for (long i = 0; i < m_kept; i++)
			sized[nsized++] = site_sizes((size_t)1 << b);
	sink = site_kept(); /* the last block is not one of them */
	for (long i = 0; i < nsized; i++)
		free(sized[i]);
	free(sized);
	for (long c = 0; c < k_chain; c++) {
		void *p = site_chain();
		for (int r = 1; r <= CHAIN_REALLOCS; r++)
			if (!(p = site_grow(p, (size_t)8 << r)))
				abort();
		sink = p; /* kept */
	}
	for (long c = 0; c < k_chain; c++)
		if (site_shrink_call(site_shrink()))
			abort(); /* glibc frees it and returns NULL */
	if (p_peak)
		peak(id);
	for (long i = 0; i < q_queue; i++) {
		void *p = site_queue(), *o = site_orphan();
		pthread_mutex_lock(&queue_lock);
		queue[queued++] = p;
		orphans[orphaned++] = o;
		pthread_cond_signal(&queue_cond);
		pthread_mutex_unlock(&queue_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 7 && argc != 8)
		return 2;
	n_temp = atol(argv[1]), m_kept = atol(argv[2]), z_zero = atol(argv[3]);
	k_chain = atol(argv[4]);
	if (argc >= 7)
		q_queue = atol(argv[5]), u_unknown = atol(argv[6]);
	if (argc == 8)
		p_peak = atol(argv[7]);
	pthread_barrier_init(&at_peak, NULL, THREADS);
	pthread_barrier_init(&left_peak, NULL, THREADS);
	queue = __libc_malloc((size_t)(THREADS * q_queue + 1) * sizeof(void *));
	orphans = __libc_malloc((size_t)(THREADS * q_queue + 1) * sizeof(void *));
	pthread_t t[THREADS], c;
	if (!queue || !orphans || pthread_create(&c, NULL, consumer, NULL))
		return 1;
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i))
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_join(c, NULL);
	struct timespec wait = {0, 60 * 1000 * 1000};
	if (orphaned)
		nanosleep(&wait, NULL);
	for (long i = 0; i < orphaned; i++)
		free(orphans[i]);
	for (long i = 0; i < u_unknown; i++)
		free(__libc_malloc(16));
	return 0;
}
