/* Allocates N times from site_before_end, then ends the way it is told:
 *   wait    say "ready" on stdout and wait to be killed
 *   abort   abort()
 *   _exit   _exit(3), skipping every exit handler
 *   segv    dereference NULL
 * Usage: prog_kill N [wait|abort|_exit|segv] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void site_before_end(void)
{
	sink = malloc(48);
	free(sink);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	const char *how = argc > 2 ? argv[2] : "wait";
	for (long i = 0; i < n; i++)
		site_before_end();
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "_exit"))
		_exit(3);
	if (!strcmp(how, "segv"))
		return *(volatile int *)sink == 0 ? *(volatile int *)0 : 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
