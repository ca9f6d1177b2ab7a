/* Threads still running at exit(): a worker allocates N times from site_live_worker, then
 * blocks forever; main allocates N times from site_main and calls exit() while the worker is
 * alive. Both threads' calls must be in the profile, finalized by the exit.
 * Usage: prog_exit_threads N */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <unistd.h>

static __thread void *volatile sink;
static sem_t done;
static long n;

__attribute__((noinline)) static void site_live_worker(void)
{
	sink = malloc(20);
	free(sink);
}

__attribute__((noinline)) static void site_main(void)
{
	sink = malloc(28); /* not 20: identical functions would be folded into one */
	free(sink);
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++)
		site_live_worker();
	sem_post(&done);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 1000;
	pthread_t t;
	sem_init(&done, 0, 0);
	if (pthread_create(&t, NULL, worker, NULL))
		return 3;
	for (long i = 0; i < n; i++)
		site_main();
	sem_wait(&done);
	exit(0);
}
