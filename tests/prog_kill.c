/* Allocates N times from site_before_kill, says "ready" on stdout, then waits to be killed.
 * Usage: prog_kill N */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void site_before_kill(void)
{
	sink = malloc(48);
	free(sink);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	for (long i = 0; i < n; i++)
		site_before_kill();
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
