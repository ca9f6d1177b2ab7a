/* Loads PLUGIN, then PLUGIN2 while the profiler's next page allocation fails (failmap.so,
 * preloaded), then allocates 100 times from main. The failure must not make the module map
 * lose the objects already loaded: the 100 calls keep their frames in this program.
 * Usage: prog_mapfail PLUGIN.so PLUGIN2.so */
#define _GNU_SOURCE /* RTLD_DEFAULT (glibc before 2.34 declares it only so) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) static void site_after_failure(int i)
{
	sink = malloc(100 + (size_t)i);
	free(sink);
}

static int load_and_run(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	void (*run)(long) = h ? (void (*)(long))dlsym(h, "plugin_run") : NULL;
	if (!run) {
		fprintf(stderr, "%s: %s\n", path, dlerror());
		return -1;
	}
	run(1);
	return 0;
}

int main(int argc, char **argv)
{
	int *fail = dlsym(RTLD_DEFAULT, "mf_test_fail_page");
	int *failed = dlsym(RTLD_DEFAULT, "mf_test_failed_pages");
	if (argc != 3 || !fail || !failed)
		return 2;
	if (load_and_run(argv[1]))
		return 3;
	*fail = 1;
	if (load_and_run(argv[2]))
		return 4;
	*fail = 0;
	for (int i = 0; i < 100; i++)
		site_after_failure(i);
	printf("pages failed: %d\n", *failed);
	return 0;
}
