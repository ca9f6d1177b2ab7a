/* Thread lifecycles, each with counts known by construction:
 *   many N       N short-lived threads, 50 at a time, each calling site_short 10 times
 *   detached     a detached thread allocates (site_detached) until main returns
 *   exit_thread  a thread calls site_exiter 500 times, then exit(0) while main blocks
 *   atexit       an atexit handler starts a thread that calls site_from_atexit 700 times
 *   nofds        use up every descriptor, then start 4 threads calling site_short 10 times
 *   alive N      N threads alive at once, each calling site_short 10 times; prints "rss KIB"
 *                while they all are
 *   mlock N      lock every page, now and to come (mlockall, as real-time programs do), then
 *                N short-lived threads, 4 at a time, each calling site_short 10 times; prints
 *                "rss KIB" at the end ("mlockall failed" and exits 0 where it is not allowed)
 * Usage: prog_threads MODE [N] */
#include <pthread.h>
#include <stdio.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static __thread void *volatile sink;
static sem_t started;

#define SITE(name, size)                                                                           \
	__attribute__((noinline)) static void name(void)                                           \
	{                                                                                          \
		sink = malloc(size);                                                               \
		free(sink);                                                                        \
	}
SITE(site_short, 16)
SITE(site_detached, 24)
SITE(site_exiter, 32)
SITE(site_from_atexit, 40)

static void *short_lived(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++)
		site_short();
	return NULL;
}

static void *detached(void *arg)
{
	(void)arg;
	sem_post(&started);
	for (;;)
		site_detached();
	return NULL;
}

static void *exiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 500; i++)
		site_exiter();
	exit(0);
}

static void *from_atexit(void *arg)
{
	(void)arg;
	for (int i = 0; i < 700; i++)
		site_from_atexit();
	return NULL;
}

static pthread_barrier_t all_alive;

static void *alive(void *arg)
{
	short_lived(arg);
	pthread_barrier_wait(&all_alive); /* all have called */
	pthread_barrier_wait(&all_alive); /* main has looked */
	return NULL;
}

/* "rss KIB": the process's resident memory now */
static void print_rss(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			printf("rss %ld\n", atol(line + 6));
	if (f)
		fclose(f);
}

static void at_exit(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, from_atexit, NULL) == 0)
		pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "many";
	sem_init(&started, 0, 0);
	pthread_t t[50];
	if (!strcmp(mode, "alive")) {
		unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 200;
		pthread_t *all = calloc(n, sizeof(*all));
		pthread_barrier_init(&all_alive, NULL, n + 1);
		for (unsigned i = 0; i < n; i++)
			if (!all || pthread_create(&all[i], NULL, alive, NULL))
				return 3;
		pthread_barrier_wait(&all_alive);
		print_rss();
		pthread_barrier_wait(&all_alive);
		for (unsigned i = 0; i < n; i++)
			pthread_join(all[i], NULL);
		return 0;
	}
	if (!strcmp(mode, "mlock")) {
		if (mlockall(MCL_CURRENT | MCL_FUTURE)) {
			puts("mlockall failed");
			return 0;
		}
		int n = argc > 2 ? atoi(argv[2]) : 200;
		for (int done = 0; done < n; done += 4) {
			for (int i = 0; i < 4; i++)
				if (pthread_create(&t[i], NULL, short_lived, NULL))
					return 3;
			for (int i = 0; i < 4; i++)
				pthread_join(t[i], NULL);
		}
		print_rss();
		return 0;
	}
	if (!strcmp(mode, "many")) {
		int n = argc > 2 ? atoi(argv[2]) : 2000;
		for (int done = 0; done < n; done += 50) {
			int batch = n - done < 50 ? n - done : 50;
			for (int i = 0; i < batch; i++)
				if (pthread_create(&t[i], NULL, short_lived, NULL))
					return 3;
			for (int i = 0; i < batch; i++)
				pthread_join(t[i], NULL);
		}
		return 0;
	}
	if (!strcmp(mode, "detached")) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_create(&t[0], &a, detached, NULL);
		sem_wait(&started);
		usleep(20000);
		return 0;
	}
	if (!strcmp(mode, "exit_thread")) {
		pthread_create(&t[0], NULL, exiter, NULL);
		for (;;)
			pause();
	}
	if (!strcmp(mode, "nofds")) {
		while (dup(0) >= 0)
			;
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, short_lived, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (!strcmp(mode, "atexit")) {
		atexit(at_exit);
		return 0;
	}
	return 2;
}
