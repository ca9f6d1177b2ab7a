/* A process whose profile directory someone else may move away and replace (a symlink, say)
 * while it runs: main calls site_main 10 times, prints its profile directory
 * (malloc_freq_dir(), or "none") and waits until the file GO exists (at most 20 s); then it
 * loads PLUGIN, calls into it, unloads it (the module map changes) and starts a thread that
 * calls site_thread 100 times. Prints "dirswap: done". Usage: prog_dirswap GO PLUGIN */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "malloc_freq.h"
#include "prog.h"

#pragma weak malloc_freq_dir

SITE(site_main, 8)
SITE(site_thread, 16)

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		site_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	for (int i = 0; i < 10; i++)
		site_main();
	const char *dir = malloc_freq_dir ? malloc_freq_dir() : NULL;
	printf("%s\n", dir ? dir : "none");
	fflush(stdout);
	for (int i = 0; i < 2000 && access(argv[1], F_OK); i++)
		usleep(10000);
	void *h = dlopen(argv[2], RTLD_NOW);
	void (*run)(long) = h ? (void (*)(long))dlsym(h, "plugin_run") : NULL;
	if (!run)
		return 3;
	run(10);
	dlclose(h);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
		return 4;
	puts("dirswap: done");
	return 0;
}
