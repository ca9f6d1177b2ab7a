/* A library whose constructor allocates, preloaded after the profiler: its constructor runs
 * before the profiler's, so the profiler starts inside one of these calls (as with
 * libselinux's under ls). */
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) static void ctor_site(void)
{
	sink = malloc(40);
	free(sink);
}

__attribute__((constructor)) static void ctoralloc_init(void)
{
	for (int i = 0; i < 5; i++)
		ctor_site();
}
