/* Hazards found in review, each a mode:
 *   forkdl PLUGIN    8 threads fork in loops (children allocate) while one dlopens and
 *                    dlcloses PLUGIN: no child may inherit a lock held by the profiler
 *   forkheld N       N times: a thread waits inside a dl_iterate_phdr callback (holding
 *                    the loader's lock) while main forks a child that allocates 5 times
 *   abba PLUGIN N    threads allocate inside dl_iterate_phdr callbacks while main dlopens
 *                    and dlcloses PLUGIN N times: no lock-order deadlock with the loader
 *   cancel           a thread with a cancellation pending calls malloc: not a cancellation
 *                    point, so it returns and the thread ends normally
 *   keys N           N threads whose key destructor allocates after ours ran its last round
 *   smallstack       a thread with a 16 KiB stack allocates
 *   dlloop PLUGIN N  dlopen/dlclose PLUGIN N times, allocating from it each time
 * Prints what it saw. Usage: prog_hazard MODE [ARGS] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;
static const char *plugin;
static volatile int stop;

static void *rec(int d)
{
	if (!d)
		return malloc(8);
	void *p = rec(d - 1);
	__asm__ volatile("" ::: "memory");
	return p;
}

static void *forker(void *arg)
{
	long id = (long)arg;
	for (int r = 0; r < 60; r++) {
		for (int i = 0; i < 100; i++)
			free(rec((i * 7 + r + (int)id) % 40));
		if (id == 0 && r % 5 == 0) {
			void *h = dlopen(plugin, RTLD_NOW);
			if (h)
				dlclose(h);
		}
		pid_t p = fork();
		if (p == 0) {
			for (int i = 0; i < 5; i++)
				free(rec(i * 3));
			_exit(0);
		}
		int st;
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			abort();
	}
	return NULL;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	free(strdup(info->dlpi_name));
	return 0;
}

static void *iterate(void *arg)
{
	(void)arg;
	while (!stop)
		dl_iterate_phdr(on_object, NULL);
	return NULL;
}

static pthread_barrier_t barrier;
static volatile int returned;

/* Holds the loader's lock (inside the callback) from the first barrier to the second. */
static int parked(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	return 1;
}

static void *park(void *arg)
{
	(void)arg;
	dl_iterate_phdr(parked, NULL);
	return NULL;
}

/* A call site the child alone uses: no unwind cache inherited from the parent knows it. */
static __attribute__((noinline)) void child_site(int i)
{
	free(rec(i + 41));
}

static void *cancelled(void *arg)
{
	(void)arg;
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_barrier_wait(&barrier); /* main cancels now */
	pthread_barrier_wait(&barrier);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old); /* pending, deferred */
	sink = malloc(10);
	returned = 1;
	return NULL;
}

static pthread_key_t late_key;
static void late_destructor(void *p)
{
	free(p);
	sink = malloc(16); /* after the profiler's own destructor has finished with this thread */
	free(sink);
}

static void *keyed(void *arg)
{
	(void)arg;
	pthread_setspecific(late_key, malloc(8));
	return NULL;
}

static void *small_stack(void *arg)
{
	(void)arg;
	sink = malloc(20);
	free(sink);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	plugin = argc > 2 ? argv[2] : "";
	if (!strcmp(mode, "forkdl")) {
		pthread_t t[8];
		for (long i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, forker, (void *)i);
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		puts("forkdl done");
		return 0;
	}
	if (!strcmp(mode, "forkheld")) {
		int n = argc > 2 ? atoi(argv[2]) : 1;
		pthread_barrier_init(&barrier, NULL, 2);
		for (int r = 0; r < n; r++) {
			pthread_t t;
			pthread_create(&t, NULL, park, NULL);
			pthread_barrier_wait(&barrier); /* t is inside the callback */
			pid_t p = fork();
			if (p == 0) {
				for (int i = 0; i < 5; i++)
					child_site(i);
				_exit(0);
			}
			int st;
			if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
				return 4;
			pthread_barrier_wait(&barrier);
			pthread_join(t, NULL);
		}
		puts("forkheld done");
		return 0;
	}
	if (!strcmp(mode, "abba") || !strcmp(mode, "dlloop")) {
		int n = argc > 3 ? atoi(argv[3]) : 100;
		pthread_t t[2];
		int threads = !strcmp(mode, "abba") ? 2 : 0;
		for (int i = 0; i < threads; i++)
			pthread_create(&t[i], NULL, iterate, NULL);
		for (int i = 0; i < n; i++) {
			void *h = dlopen(plugin, RTLD_NOW);
			void (*run)(long) = h ? (void (*)(long))dlsym(h, "plugin_run") : NULL;
			if (!run)
				return 3;
			run(1);
			dlclose(h);
		}
		stop = 1;
		for (int i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
		printf("%s done\n", mode);
		return 0;
	}
	if (!strcmp(mode, "cancel")) {
		pthread_t t;
		void *res;
		pthread_barrier_init(&barrier, NULL, 2);
		pthread_create(&t, NULL, cancelled, NULL);
		pthread_barrier_wait(&barrier);
		pthread_cancel(t);
		pthread_barrier_wait(&barrier);
		pthread_join(t, &res);
		printf("malloc returned: %d; thread %s\n", returned,
		       res == PTHREAD_CANCELED ? "cancelled" : "ended normally");
		return 0;
	}
	if (!strcmp(mode, "keys")) {
		int n = argc > 2 ? atoi(argv[2]) : 100;
		pthread_key_create(&late_key, late_destructor);
		for (int i = 0; i < n; i++) {
			pthread_t t;
			pthread_create(&t, NULL, keyed, NULL);
			pthread_join(t, NULL);
		}
		puts("keys done");
		return 0;
	}
	if (!strcmp(mode, "smallstack")) {
		pthread_attr_t a;
		pthread_t t;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 16384);
		if (pthread_create(&t, &a, small_stack, NULL))
			return 3;
		pthread_join(t, NULL);
		puts("smallstack done");
		return 0;
	}
	return 2;
}
