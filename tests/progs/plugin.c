/* A library that allocates, loaded and unloaded by prog_dlopen (and prog_dlbind). */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>

static void *volatile sink;
static __thread long plugin_tls[64]; /* a library with TLS, loaded and unloaded at run time */

__attribute__((noinline)) static void plugin_site(void)
{
	sink = malloc(72);
	free(sink);
}

void plugin_run(long n)
{
	for (long i = 0; i < n; i++) {
		plugin_tls[i % 64] += i;
		plugin_site();
	}
}

/* n calls of each entry point but malloc, each block freed but pvalloc's: by prog_dlbind. */
void plugin_entries(long n)
{
	for (long i = 0; i < n; i++) {
		void *p;
		free(sink = calloc(3, 24));
		free(sink = realloc(NULL, 40));
		free(sink = reallocarray(NULL, 5, 8));
		if (posix_memalign(&p, 64, 100) == 0)
			free(sink = p);
		free(sink = aligned_alloc(64, 128));
		free(sink = memalign(64, 100));
		free(sink = valloc(100));
		sink = pvalloc(
		    100); /* (kept: jemalloc has no pvalloc, and glibc's block is not its) */
	}
}
