/* Allocates N times from site_before_end, then ends the way it is told:
 *   wait    say "ready" on stdout and wait to be killed
 *   abort   abort()
 *   _exit   _exit(3), skipping every exit handler
 *   segv    dereference NULL
 *   segv_handler, abort_handler   the same with the program's own handler, which says so
 *           and re-raises with the default action (so a core is dumped)
 * Usage: prog_kill N [wait|abort|_exit|segv|segv_handler|abort_handler] */
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

static void on_fatal(int sig)
{
	static const char msg[] = "program's own handler ran\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(99);
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	const char *how = argc > 2 ? argv[2] : "wait";
	if (!strcmp(how, "segv_handler") || !strcmp(how, "abort_handler")) {
		signal(SIGSEGV, on_fatal);
		signal(SIGABRT, on_fatal);
		how = how[0] == 's' ? "segv" : "abort";
	}
	for (long i = 0; i < n; i++)
		site_before_end();
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "_exit"))
		_exit(3);
	if (!strcmp(how, "segv")) {
		int *volatile null = NULL; /* volatile: the load must happen */
		return *null;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
