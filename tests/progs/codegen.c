/* Allocation sites with counts known by construction, built by tests/preload/t_codegen.sh with each
 * compiler and code-generation flag set: N calls at site_direct (malloc through a wrapper),
 * 2N at site_deep (the wrapper three frames down), 3N at site_calloc (calloc, no wrapper),
 * 4N at site_big (through the wrapper, below a 64 KiB frame the stack-clash probes walk).
 * Prints the number of blocks it got and exits 3. Usage: codegen N */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE  __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory") /* (and no tail call before it) */

static void *volatile sink;
static unsigned long got;

NOINLINE void *wrap_malloc(size_t n)
{
	void *p = malloc(n);
	BARRIER();
	return p;
}

NOINLINE static void keep(void *p)
{
	got += p != NULL;
	sink = p;
	free(sink);
	BARRIER();
}

NOINLINE void site_direct(int n)
{
	for (int i = 0; i < n; i++)
		keep(wrap_malloc(16 + i % 8));
	BARRIER();
}

NOINLINE void deep_1(int n)
{
	for (int i = 0; i < n; i++)
		keep(wrap_malloc(32));
	BARRIER();
}

NOINLINE void deep_2(int n)
{
	deep_1(n);
	BARRIER();
}

NOINLINE void site_deep(int n)
{
	deep_2(2 * n);
	BARRIER();
}

NOINLINE void site_calloc(int n)
{
	for (int i = 0; i < 3 * n; i++)
		keep(calloc(1, 48));
	BARRIER();
}

NOINLINE void site_big(int n)
{
	volatile char frame[65536];
	frame[0] = 1;
	for (int i = 0; i < 4 * n; i++)
		keep(wrap_malloc(64 + frame[0]));
	BARRIER();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	site_direct(n);
	site_deep(n);
	site_calloc(n);
	site_big(n);
	printf("%lu blocks\n", got);
	return 3;
}
