/* Loads a plugin with dlopen, has it allocate N times, unloads it, then allocates once more
 * from site_after_dlclose. The plugin's frames must still symbolize after the unload. With
 * GO, it first allocates at site_before_go, then waits until the file GO exists (a reader
 * has read the module map meanwhile).
 * Usage: prog_dlopen PLUGIN.so N [GO] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void site_before_go(void)
{
	sink = malloc(16);
	free(sink);
}

__attribute__((noinline)) static void site_after_dlclose(void)
{
	sink = malloc(8);
	free(sink);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return 2;
	if (argc == 4)
		site_before_go(); /* (the thread's file and the module map are made) */
	while (argc == 4 && access(argv[3], F_OK))
		usleep(10 * 1000);
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 3;
	}
	void (*run)(long) = (void (*)(long))dlsym(h, "plugin_run");
	if (!run)
		return 4;
	run(atol(argv[2]));
	if (dlclose(h))
		return 5;
	site_after_dlclose();
	return 0;
}
