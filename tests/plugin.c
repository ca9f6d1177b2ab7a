/* A library that allocates, loaded and unloaded by prog_dlopen. */
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) static void plugin_site(void)
{
	sink = malloc(72);
	free(sink);
}

void plugin_run(long n)
{
	for (long i = 0; i < n; i++)
		plugin_site();
}
