/* MALLOC_FREQ_WEIGHT=time on cheap calls, with the time each stack should be charged known by
 * construction: a call at site_start (the thread's start is charged to it), then N / 1000
 * rounds of: 1000 times U steps of work and a malloc/free pair at site_loop; the same 1000 times U
 * steps without the pairs, then a pair at site_ref. The two sites are charged about the same work,
 * done side by side; site_loop also the program's own time in its 1000 pairs. Prints each thread's
 * CPU time in the two kinds of work, in ns: "loop NS ref NS". T threads (default 1) do it at
 * once; with F = 1, a child forked first does it too, in one thread.
 * Usage: prog_weight_cost N U [T [F]] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prog.h"

SITE(site_start, 8)
SITE(site_loop, 24)
SITE(site_ref, 48)

static long n, u;

static unsigned long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* (a chain of register operations: its time does not depend on where memory lies) */
static volatile unsigned long work_sink;
__attribute__((noinline)) static void work(long steps)
{
	unsigned long x = 88172645463325252ul;
	for (long i = 0; i < steps; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__("" : "+r"(x));
	}
	work_sink = x;
}

static void *run(void *arg)
{
	(void)arg;
	enum { ROUND = 1000 };
	unsigned long long loop = 0, ref = 0;
	site_start();
	for (long r = 0; r < n / ROUND; r++) {
		unsigned long long t0 = cpu_ns();
		for (long i = 0; i < ROUND; i++) {
			work(u);
			site_loop();
		}
		unsigned long long t1 = cpu_ns();
		for (long i = 0; i < ROUND; i++)
			work(u);
		site_ref();
		unsigned long long t2 = cpu_ns();
		loop += t1 - t0;
		ref += t2 - t1;
	}
	flockfile(stdout);
	printf("loop %llu ref %llu\n", loop, ref);
	fflush(stdout);
	funlockfile(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	n = atol(argv[1]);
	u = atol(argv[2]);
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	pid_t child = argc > 4 && atoi(argv[4]) ? fork() : -1;
	if (child == 0)
		threads = 1;
	if (threads <= 1) {
		run(NULL);
	} else {
		pthread_t th[64];
		for (int i = 0; i < threads && i < 64; i++)
			pthread_create(&th[i], NULL, run, NULL);
		for (int i = 0; i < threads && i < 64; i++)
			pthread_join(th[i], NULL);
	}
	if (child > 0) {
		int status;
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return 1;
	}
	return 0;
}
