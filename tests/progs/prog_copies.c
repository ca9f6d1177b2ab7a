/* Run with the profiler preloaded twice (two copies of the library, or the launcher's and a
 * user's): makes n calls of malloc from one site, then prints how many threads the process
 * has and which object's function takes SIGUSR2 (the profiler's snapshot signal, if it was
 * asked for one), so that a second copy's thread or handler shows. Usage: prog_copies n */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog.h"

SITE(site_copies, 48)

static int threads_now(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Threads:", 8))
			n = atoi(line + 8);
	if (f)
		fclose(f);
	return n;
}

/* The threads that stay: the least of ten looks 10 ms apart (the profiler's short task that
 * opens its files is a thread of the process for a moment). */
static int threads(void)
{
	int least = threads_now();
	for (int i = 0; i < 9; i++) {
		usleep(10000);
		int n = threads_now();
		least = n < least ? n : least;
	}
	return least;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	for (long i = 0; i < n; i++)
		site_copies();
	struct sigaction sa;
	Dl_info info;
	const char *by = "none";
	if (sigaction(SIGUSR2, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
	    sa.sa_handler != SIG_IGN)
		by = dladdr((void *)sa.sa_handler, &info) && info.dli_fname ? info.dli_fname : "?";
	printf("%ld calls; %d threads; SIGUSR2 taken by %s\n", n, threads(), by);
	return 0;
}
