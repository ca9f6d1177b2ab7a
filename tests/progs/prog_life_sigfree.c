/* Frees made by a signal handler with lifetimes on (tests/preload/t_life_sigfree.sh): a timer's
 * handler frees one of K blocks of site_pool every 200 us while the main thread allocates
 * and frees in a loop at site_loop, so that most of its frees interrupt the profiler, in its
 * address map or recording the loop's call. The handler frees blocks of sizes the loop does
 * not use (each size takes 7 blocks, as many as glibc's per-thread cache of a size holds),
 * so that glibc's own state is never the one the handler interrupted. Every block is freed.
 * Usage: prog_life_sigfree */
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>

#define NOINLINE __attribute__((noinline))
#define K	 (61 * 7)

static void *pool[K];
static volatile sig_atomic_t next;

NOINLINE static void *site_pool(size_t n)
{
	void *volatile p = malloc(n);
	return p;
}

NOINLINE static void *site_loop(void)
{
	void *volatile p = malloc(32);
	return p;
}

static void on_timer(int sig)
{
	(void)sig;
	if (next < K)
		free(pool[next++]);
}

int main(void)
{
	for (int k = 0; k < K; k++)
		pool[k] = site_pool(56 + 16 * (k / 7));
	struct sigaction sa = {0};
	sa.sa_handler = on_timer;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval every = {{0, 200}, {0, 200}};
	setitimer(ITIMER_REAL, &every, NULL);
	while (next < K)
		free(site_loop());
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	return 0;
}
