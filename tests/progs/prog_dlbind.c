/* Opens PLUGIN (tests/progs/plugin.c) the way MODE says, has it call malloc N times in all
 * (plugin_run) and each other entry point N / 10 times (plugin_entries), and closes it:
 *   now, lazy         dlopen with RTLD_NOW, RTLD_LAZY
 *   deep, deeplazy    dlopen with RTLD_NOW | RTLD_DEEPBIND, RTLD_LAZY | RTLD_DEEPBIND (its
 *                     lookups find its own libc's malloc first)
 *   newlm             dlmopen(LM_ID_NEWLM): a namespace of its own, with a libc of its own
 *   two               two such namespaces at once, N / 2 calls in each
 *   again             20 times a new namespace, opened, N / 20 calls, closed
 *   inside            a new namespace, then a second copy of PLUGIN (PLUGIN2) opened into the
 *                     same namespace, which makes the N calls
 * With MALLOC_ONLY=1 in the environment, plugin_entries is left out.
 * Prints "MODE: N calls". Usage: prog_dlbind MODE PLUGIN N [PLUGIN2] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void run_fn(long);

static void *open_as(const char *mode, const char *plugin)
{
	void *h;
	if (!strcmp(mode, "now") || !strcmp(mode, "lazy"))
		h = dlopen(plugin, !strcmp(mode, "now") ? RTLD_NOW : RTLD_LAZY);
	else if (!strcmp(mode, "deep") || !strcmp(mode, "deeplazy"))
		h = dlopen(plugin, (!strcmp(mode, "deep") ? RTLD_NOW : RTLD_LAZY) | RTLD_DEEPBIND);
	else
		h = dlmopen(LM_ID_NEWLM, plugin, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		exit(3);
	}
	return h;
}

/* plugin_run(n) and plugin_entries(n / 10) of the library h, then closes it. */
static void run_close(void *h, long n)
{
	run_fn *run = (run_fn *)dlsym(h, "plugin_run"),
	       *entries = (run_fn *)dlsym(h, "plugin_entries");
	if (!run || !entries)
		exit(4);
	run(n);
	const char *only = getenv("MALLOC_ONLY");
	if (!only || strcmp(only, "1"))
		entries(n / 10);
	if (dlclose(h))
		exit(5);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	const char *mode = argv[1], *plugin = argv[2];
	long n = atol(argv[3]);
	if (!strcmp(mode, "two")) {
		void *a = open_as(mode, plugin), *b = open_as(mode, plugin);
		run_close(a, n / 2);
		run_close(b, n - n / 2);
	} else if (!strcmp(mode, "again")) {
		for (int i = 0; i < 20; i++)
			run_close(open_as(mode, plugin), n / 20);
	} else if (!strcmp(mode, "inside")) {
		Lmid_t ns;
		void *first = open_as(mode, plugin);
		if (argc < 5 || dlinfo(first, RTLD_DI_LMID, &ns))
			return 6;
		void *second = dlmopen(ns, argv[4], RTLD_NOW);
		if (!second)
			return 7;
		run_close(second, n);
		dlclose(first);
	} else {
		run_close(open_as(mode, plugin), n);
	}
	printf("%s: %ld calls\n", mode, n);
	return 0;
}
