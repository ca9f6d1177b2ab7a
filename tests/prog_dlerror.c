/* A dlopen that fails, then (with an argument) an allocation from a call site no run made
 * before, then dlerror(): the message must still be there, though the profiler may load
 * libunwind (dlopen) for that site in between. Prints whether the message was kept and
 * whether libunwind is in the process. Usage: prog_dlerror [new] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void new_site(void)
{
	void *volatile p = malloc(100);
	free(p);
}

static int find_libunwind(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (strstr(info->dlpi_name, "libunwind"))
		*(int *)arg = 1;
	return 0;
}

int main(int argc, char **argv)
{
	(void)argv;
	void *h = dlopen("/nonexistent/libnothing.so", RTLD_NOW);
	if (argc > 1)
		new_site();
	const char *e = dlerror();
	int loaded = 0;
	dl_iterate_phdr(find_libunwind, &loaded);
	printf("%s, message %s, libunwind %s\n", h ? "opened" : "failed", e ? "kept" : "lost",
	       loaded ? "loaded" : "absent");
	return 0;
}
