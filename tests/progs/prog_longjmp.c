/* A timer's SIGALRM handler leaves with siglongjmp, abandoning whatever it interrupted (the
 * allocator, the profiler); the handler itself never allocates. main calls site_loop N times
 * through call paths 0 to 7 frames deep, each call either returns or is abandoned by a jump;
 * then the timer stops and main forks a child that calls site_child 10 times and exits 0.
 *   loop N    the timer starts after main's first allocation
 *   first N   the timer starts before any allocation (the profiler's start is interrupted)
 * Needs an async-signal-safe allocator preloaded after the profiler (tests/progs/bumpalloc.c).
 * Prints "longjmp: N calls, J jumps, child exited 0". Usage: prog_longjmp loop|first N */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prog.h"

SITE(site_first, 8)
SITE(site_loop, 16)
SITE(site_child, 32)

static sigjmp_buf back;
static volatile sig_atomic_t armed;

static void on_alarm(int sig)
{
	(void)sig;
	if (armed)
		siglongjmp(back, 1);
}

static void timer(long us)
{
	struct itimerval it = {{0, us}, {0, us}};
	setitimer(ITIMER_REAL, &it, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 100000;
	volatile long i = 0, jumps = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	if (!strcmp(mode, "loop"))
		site_first();
	else if (strcmp(mode, "first"))
		return 2;
	if (sigsetjmp(back, 1)) {
		jumps++;
		i++; /* the abandoned call was made */
	}
	armed = 1;
	timer(40);
	for (; i < n; i++)
		prog_rec((int)(i % 8), site_loop);
	armed = 0;
	timer(0);
	pid_t p = fork();
	if (p == 0) {
		for (int k = 0; k < 10; k++)
			site_child();
		_exit(0);
	}
	int st;
	int child_ok = p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st);
	printf("longjmp: %ld calls, %s, child %s\n", n, jumps > 0 ? "some jumps" : "no jumps",
	       child_ok ? "exited 0" : "failed");
	fprintf(stderr, "jumps: %ld\n", jumps);
	return 0;
}
