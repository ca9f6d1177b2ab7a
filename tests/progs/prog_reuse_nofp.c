/* prog_reuse's two frames without a frame pointer (the tests are built with one; this file is
 * built without, by any compiler: GCC's optimize attribute has no equal in clang): rbp passes
 * through these two untouched, from framed_to's frame to the allocator's. */
#include <stdlib.h>

void relay_nofp(size_t n);

static void *volatile sink;

__attribute__((noinline)) static void leaf_nofp(size_t n)
{
	sink = malloc(n);
	free(sink);
}

__attribute__((noinline)) void relay_nofp(size_t n)
{
	leaf_nofp(n);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}
