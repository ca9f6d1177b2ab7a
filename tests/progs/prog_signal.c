/* Allocation in a signal handler: a timer fires every US microseconds (50 unless given, under
 * 1000000) while the main loop allocates N times from site_main_loop, so the handler (which
 * allocates from site_in_handler) often interrupts malloc and the profiler. Prints how often
 * the handler allocated. The handler's size class is warmed first, so glibc serves it from its
 * thread cache without taking a lock the interrupted malloc may hold.
 * Usage: prog_signal N [US] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void *volatile sink;
static volatile sig_atomic_t handled;

__attribute__((noinline)) static void site_in_handler(void)
{
	void *p = malloc(24);
	free(p);
}

__attribute__((noinline)) static void site_main_loop(void)
{
	sink = malloc(200);
	free(sink);
}

static void on_alarm(int sig)
{
	(void)sig;
	site_in_handler();
	handled++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	free(malloc(24));
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	long us = argc > 2 ? atol(argv[2]) : 50;
	struct itimerval it = {{0, us}, {0, us}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; i < n; i++)
		site_main_loop();
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("handled %d\n", (int)handled);
	return 0;
}
