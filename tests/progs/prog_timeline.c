/* Allocates in phases known by their counts and their pauses: for each argument N:MS, N calls
 * of malloc(100) (each block kept until the next phase starts, then freed: live bytes step
 * with the phases), then a pause of MS milliseconds; the argument "reset" in their place
 * calls malloc_freq_reset, "snap" malloc_freq_snapshot (found with dlsym: nothing without the
 * profiler). Last, "ready" on stdout; with the argument "wait" first, then waits to be killed.
 * Usage: prog_timeline [wait] N:MS|reset|snap ... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *blocks[1 << 16];

__attribute__((noinline)) static void *site_phase(void)
{
	return malloc(100);
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "wait");
	long kept = 0;
	for (int a = 1 + wait; a < argc; a++) {
		if (!strcmp(argv[a], "reset")) {
			int (*reset)(void) =
			    (int (*)(void))dlsym(RTLD_DEFAULT, "malloc_freq_reset");
			if (reset)
				reset();
			continue;
		}
		if (!strcmp(argv[a], "snap")) {
			int (*snap)(const char *) =
			    (int (*)(const char *))dlsym(RTLD_DEFAULT, "malloc_freq_snapshot");
			if (snap && snap(NULL) < 0)
				return 1;
			continue;
		}
		long n = atol(argv[a]),
		     ms = strchr(argv[a], ':') ? atol(strchr(argv[a], ':') + 1) : 0;
		for (long i = 0; i < kept; i++)
			free(blocks[i]);
		for (long i = 0; i < n; i++) {
			void *p = site_phase();
			if (i < (long)(sizeof(blocks) / sizeof(blocks[0])))
				blocks[i] = p;
			else
				free(p);
		}
		kept = n < (long)(sizeof(blocks) / sizeof(blocks[0])) ? n : 0;
		nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000}, NULL);
	}
	printf("ready\n");
	fflush(stdout);
	while (wait)
		pause();
	return 0;
}
