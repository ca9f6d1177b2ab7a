/* Blocks laid out as the lifetimes map's placement finds hardest (tests/preload/t_life_layout.sh): the
 * map looks for a block first at its place in its 64 KiB region, so blocks that share their
 * place in different regions, or whose places lie close together, meet in a shard's runs. In
 * T threads, each keeps, from three sites:
 *   site_pages  N page-aligned blocks of 64 bytes (each at a page's first place)
 *   site_big    B blocks of 256 KiB (glibc maps each: each at a page's start, one a region)
 *   site_side   N blocks of 24 bytes, side by side (two places apart)
 * then frees every other block of each site, the last first (the frees shift the runs back
 * across blocks of all three), and exits with the rest live: at exit each site has leaked
 * half its blocks (rounded up) and freed half, and no free is of a block not seen.
 * Usage: prog_life_layout N B T */
#include <pthread.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static long n, big;

NOINLINE static void *site_pages(void)
{
	void *p;
	return posix_memalign(&p, 4096, 64) ? NULL : p;
}

NOINLINE static void *site_big(void)
{
	void *volatile p = malloc(256 << 10); /* (no tail call: the frame stays) */
	return p;
}

NOINLINE static void *site_side(void)
{
	void *volatile p = malloc(24);
	return p;
}

/* Frees blocks[i] for every odd i, the last first. */
static void free_odd(void **blocks, long count)
{
	for (long i = count - 1; i >= 0; i--)
		if (i & 1)
			free(blocks[i]);
}

static void *work(void *unused)
{
	(void)unused;
	void **pages = calloc((size_t)n, sizeof(void *)),
	     **bigs = calloc((size_t)big, sizeof(void *));
	void **side = calloc((size_t)n, sizeof(void *));
	if (!pages || !bigs || !side)
		abort();
	for (long i = 0; i < n; i++) {
		if (!(pages[i] = site_pages()) || !(side[i] = site_side()))
			abort();
		if (i < big && !(bigs[i] = site_big()))
			abort();
	}
	free_odd(pages, n);
	free_odd(bigs, big);
	free_odd(side, n);
	return NULL; /* (the arrays stay too: their calloc's stacks are not this test's) */
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 10000;
	big = argc > 2 ? atol(argv[2]) : 100;
	long threads = argc > 3 ? atol(argv[3]) : 2;
	if (n < big)
		return 2;
	pthread_t t[16];
	if (threads < 1 || threads > 16)
		return 2;
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, work, NULL))
			return 1;
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
