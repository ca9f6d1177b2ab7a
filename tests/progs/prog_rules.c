/* Programs for the rule cache's tests (t_rules.sh). Usage:
 *   prog_rules dlerror [new]  a dlopen that fails, then (with "new") an allocation from a call
 *                             site no run made before, then dlerror(): the message must still
 *                             be there. Prints whether it was kept and whether libunwind is in
 *                             the process.
 *   prog_rules signal N       raises SIGUSR1 N times; the handler allocates, so each of those
 *                             stacks passes through the signal trampoline, which only libunwind
 *                             can step. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

__attribute__((noinline)) static void new_site(void)
{
	sink = malloc(100);
	free(sink);
}

__attribute__((noinline)) static void in_handler(void)
{
	sink = malloc(24);
	free(sink);
}

static void on_usr1(int sig)
{
	(void)sig;
	in_handler();
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
	if (argc > 2 && !strcmp(argv[1], "signal")) {
		signal(SIGUSR1, on_usr1);
		for (int i = 0; i < atoi(argv[2]); i++)
			raise(SIGUSR1);
		return 0;
	}
	void *h = dlopen("/nonexistent/libnothing.so", RTLD_NOW);
	if (argc > 2)
		new_site();
	const char *e = dlerror();
	int loaded = 0;
	dl_iterate_phdr(find_libunwind, &loaded);
	printf("%s, message %s, libunwind %s\n", h ? "opened" : "failed", e ? "kept" : "lost",
	       loaded ? "loaded" : "absent");
	return 0;
}
