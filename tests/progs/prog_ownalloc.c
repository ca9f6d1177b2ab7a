/* A program with an allocator of its own: malloc, calloc, realloc and free over a static bump
 * arena, each counting its calls; a free of a block not from the arena aborts, as a real
 * allocator's would ("free of a foreign block"). It calls every entry point (reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc and pvalloc from a site of their own,
 * SITE_CALLS(i) times each), says whether each gave a block of its arena, frees its own, and
 * prints what its allocator counted (before printing anything), after THREADS threads that
 * call posix_memalign have come and gone. Plain and profiled, the output must be the same.
 * Usage: prog_ownalloc */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SITE_CALLS(i) (10 * ((i) + 1))
#define ARENA	      (8 << 20)
#define THREADS	      4
#define MAGIC	      0x6f776e626c6f636bULL /* "ownblock" */

static _Alignas(4096) unsigned char arena[ARENA];
static size_t used;
static unsigned long n_malloc, n_calloc, n_realloc, n_free;

struct header {
	uint64_t magic;
	uint64_t size;
};

static int own(const void *p)
{
	return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + ARENA;
}

static void *take(size_t n)
{
	size_t old = __atomic_load_n(&used, __ATOMIC_RELAXED), start;
	do {
		start = (old + sizeof(struct header) + 15) & ~(size_t)15;
		if (n > ARENA || start + n > ARENA) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&used, &old, start + n, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	struct header *h = (struct header *)(arena + start) - 1;
	h->magic = MAGIC;
	h->size = n;
	return arena + start;
}

static void foreign(const char *what)
{
	static const char msg[] = "prog_ownalloc: free of a foreign block in ";
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, what, strlen(what));
	(void)!write(2, "\n", 1);
	abort();
}

void *malloc(size_t n)
{
	__atomic_fetch_add(&n_malloc, 1, __ATOMIC_RELAXED);
	return take(n);
}

void *calloc(size_t n, size_t m)
{
	__atomic_fetch_add(&n_calloc, 1, __ATOMIC_RELAXED);
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return take(total); /* (the arena is never reused: still zero) */
}

void *realloc(void *p, size_t n)
{
	__atomic_fetch_add(&n_realloc, 1, __ATOMIC_RELAXED);
	if (p && (!own(p) || ((struct header *)p)[-1].magic != MAGIC))
		foreign("realloc");
	void *q = take(n);
	if (q && p) {
		size_t old = ((struct header *)p)[-1].size;
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}

void free(void *p)
{
	__atomic_fetch_add(&n_free, 1, __ATOMIC_RELAXED);
	if (p && (!own(p) || ((struct header *)p)[-1].magic != MAGIC))
		foreign("free");
}

static void *volatile sink;
static unsigned long threads_owned;
static volatile size_t huge = SIZE_MAX / 2;
static unsigned long owned[6], seen[6];

static void note(int i, void *p)
{
	seen[i]++;
	sink = p;
	if (p && own(p)) {
		owned[i]++;
		free(p);
	}
}

__attribute__((noinline)) static void site_reallocarray(void)
{
	note(0, reallocarray(malloc(10), 10, 10));
}
__attribute__((noinline)) static void site_posix_memalign(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, 100) == 0)
		note(1, p);
}
__attribute__((noinline)) static void site_aligned_alloc(void)
{
	note(2, aligned_alloc(64, 128));
}
__attribute__((noinline)) static void site_memalign(void)
{
	note(3, memalign(64, 100));
}
__attribute__((noinline)) static void site_valloc(void)
{
	note(4, valloc(100));
}
__attribute__((noinline)) static void site_pvalloc(void)
{
	note(5, pvalloc(100));
}

static void (*const sites[])(void) = {site_reallocarray, site_posix_memalign, site_aligned_alloc,
				      site_memalign,	 site_valloc,	      site_pvalloc};
static const char *const names[] = {"reallocarray", "posix_memalign", "aligned_alloc",
				    "memalign",	    "valloc",	      "pvalloc"};

/* A thread's calls: its first is recorded, with the loader's help (libunwind's thread-local
 * block, given back at the thread's exit). */
static void *thread_main(void *arg)
{
	for (int k = 0; k < 10; k++) {
		void *p = NULL;
		if (posix_memalign(&p, 64, 100) == 0 && own(p))
			__atomic_fetch_add(&threads_owned, 1, __ATOMIC_RELAXED);
	}
	return arg;
}

int main(void)
{
	for (int i = 0; i < 6; i++)
		for (int k = 0; k < SITE_CALLS(i); k++)
			sites[i]();
	/* an overflowing reallocarray fails and leaves its block */
	void *p = malloc(8);
	errno = 0;
	void *q = reallocarray(p, huge, 3);
	int overflow = !q && errno == ENOMEM;
	free(p);
	pthread_t t[THREADS];
	int started = 0;
	for (int i = 0; i < THREADS; i++)
		started += pthread_create(&t[i], NULL, thread_main, NULL) == 0;
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	unsigned long m = n_malloc, c = n_calloc, r = n_realloc, f = n_free;
	for (int i = 0; i < 6; i++)
		printf("%s: %lu calls, %lu of its own blocks\n", names[i], seen[i], owned[i]);
	printf("reallocarray overflow: %s\n", overflow ? "ENOMEM" : "wrong");
	printf("%d threads: %lu of their own blocks\n", started, threads_owned);
	printf("own allocator: malloc %lu, calloc %lu, realloc %lu, free %lu\n", m, c, r, f);
	return 0;
}
