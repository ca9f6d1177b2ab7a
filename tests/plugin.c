/* A library that allocates, loaded and unloaded by prog_dlopen. */
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
