/* Loads a plugin with dlopen, has it allocate N times, unloads it, then allocates once more
 * from site_after_dlclose. The plugin's frames must still symbolize after the unload.
 * Usage: prog_dlopen PLUGIN.so N */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) static void site_after_dlclose(void)
{
	sink = malloc(8);
	free(sink);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
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
