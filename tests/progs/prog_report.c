/* What a program puts into its profile that mf_print must print safely:
 *   names PLUGIN  3 threads named (PR_SET_NAME) with a newline, terminal escape sequences and
 *                 a tab call site_named 100 times each; main loads PLUGIN (whose file name
 *                 may hold such bytes too), calls plugin_run(10) and unloads it
 *   huge          site_huge asks malloc for SIZE_MAX / 2 bytes 4 times (each call fails),
 *                 site_small for 100 bytes once: 2^65 + 96 bytes requested in all
 * Prints what it did. Usage: prog_report names PLUGIN | prog_report huge */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "prog.h"

SITE(site_named, 16)
SITE(site_huge, SIZE_MAX / 2)
SITE(site_small, 100)

static const char *const names[] = {"two\nlines", "\033[2J\033[31mred", "tab\there"};

static void *named(void *arg)
{
	prctl(PR_SET_NAME, (unsigned long)arg, 0, 0, 0);
	for (int i = 0; i < 100; i++)
		site_named();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "names") && argc > 2) {
		pthread_t t[3];
		for (int i = 0; i < 3; i++)
			if (pthread_create(&t[i], NULL, named, (void *)names[i]))
				return 3;
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		void *h = dlopen(argv[2], RTLD_NOW);
		void (*run)(long) = h ? (void (*)(long))dlsym(h, "plugin_run") : NULL;
		if (!run)
			return 4;
		run(10);
		dlclose(h);
		puts("names: 3 threads, 10 plugin calls");
		return 0;
	}
	if (!strcmp(mode, "huge")) {
		for (int i = 0; i < 4; i++)
			site_huge();
		site_small();
		puts("huge: 4 calls of SIZE_MAX / 2 bytes, 1 of 100");
		return 0;
	}
	return 2;
}
