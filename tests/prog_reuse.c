/* Stacks that share frames with the one before: the cached walk reuses the outer frames of
 * the last capture when nothing above a matching frame changed, and must notice when
 * something did. Each round: relay() is called from two call sites of main (same stack
 * depth, same frames above relay, different return addresses into main), and through
 * framed() (an rbp frame, alloca) from two sites. Counts per site are known: N each.
 * Prints "done". Usage: prog_reuse N */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
static void *volatile sink;

NOINLINE static void leaf(size_t n)
{
	sink = malloc(n);
	free(sink);
}

NOINLINE static void relay(size_t n)
{
	leaf(n);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

NOINLINE static void framed(size_t n)
{
	char *p = alloca(n + 16); /* rbp-based CFA */
	memset(p, 0, n + 16);
	sink = p;
	relay(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void site_one(long n)
{
	for (long i = 0; i < n; i++) {
		relay(8);
		__asm__ volatile("" ::: "memory");
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	for (long i = 0; i < n; i++) {
		relay(16); /* call site A */
		__asm__ volatile("" ::: "memory");
		relay(24); /* call site B: same frames above relay, another return address */
		__asm__ volatile("" ::: "memory");
		framed(32); /* call site C */
		__asm__ volatile("" ::: "memory");
		framed((size_t)(i & 1) * 64); /* call site D: an rbp frame of changing size */
		__asm__ volatile("" ::: "memory");
	}
	site_one(n);
	puts("done");
	return 0;
}
