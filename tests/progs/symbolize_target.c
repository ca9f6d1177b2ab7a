/* A small program for test_symbolize, which builds it with -g -O2 and looks up its call sites:
 * a plain call, and a call inside an always_inline function. Lines the test checks carry a
 * "@mark NAME" comment; the test finds them by scanning this file, so they may move. */
#include <stdio.h>
#include <stdlib.h>

/* Stores the pointers so that no call below is a tail call or optimized away. */
void *volatile sink;
int counter;

static inline __attribute__((always_inline)) void *inner_alloc(size_t n)
{
	void *p = malloc(n + 16); /* @mark inline_call */

	sink = p;
	return p;
}

__attribute__((noinline)) void *outer_alloc(size_t n)
{
	void *p = inner_alloc(n); /* @mark outer_call */

	counter++;
	return p;
}

__attribute__((noinline)) void *plain_alloc(size_t n)
{
	void *p = calloc(1, n); /* @mark plain_call */

	sink = p;
	return p;
}

int main(int argc, char **argv)
{
	void *a = outer_alloc((size_t)argc * 8);
	void *b = plain_alloc((size_t)argc * 4);

	(void)argv;
	printf("%d\n", counter);
	free(a);
	free(b);
	return 0;
}
