/* dl_iterate_phdr callbacks that allocate, as a program may write them:
 *   jump N   N callbacks that each allocate once (site_callback) and return, one that
 *            allocates once (site_left) and leaves by longjmp, then N calls from main
 *            (site_after). The process's first allocation is made in the first callback.
 *            glibc leaves its loader lock held by a callback left by longjmp: nothing here
 *            uses the loader after it. Prints "callbacks: N returned, 1 left, N after".
 *   fork N LIBRARY  two threads allocate inside callbacks from ever new stacks (the
 *            profiler's slow steps), and one loads and unloads LIBRARY and allocates, while
 *            main forks N children that allocate and exit 0. Prints "fork: N children exited 0".
 * Usage: prog_callback jump N | fork N LIBRARY */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prog.h"

SITE(site_callback, 24)
SITE(site_left, 32)
SITE(site_after, 40)

static jmp_buf back;
static long returned, left;

static int callback_return(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	site_callback();
	returned++;
	return 1; /* (the first object only) */
}

static int callback_leave(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	site_left();
	left++;
	longjmp(back, 1);
}

static volatile int stop;

/* A stack the thread has not used yet, at every call (1024 of them, then again). */
static void site_new(unsigned *path)
{
	prog_path0(10, (*path)++, site_callback);
}

static int callback_new(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	site_new(arg);
	return 1;
}

static void *inside(void *arg)
{
	(void)arg;
	unsigned path = 0;
	while (!stop)
		dl_iterate_phdr(callback_new, &path);
	return NULL;
}

/* Loads and unloads a library (the profiler then looks at the loaded objects, waiting for the
 * loader's lock), and allocates from new stacks. */
static void *outside(void *arg)
{
	unsigned path = 0;
	while (!stop) {
		void *h = dlopen(arg, RTLD_NOW);
		if (h)
			dlclose(h);
		site_new(&path);
	}
	return NULL;
}

static int forks(long n, const char *library)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, i < 2 ? inside : outside, (void *)library);
	long good = 0;
	for (long i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			site_after();
			_exit(0);
		}
		int st;
		good += p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st);
	}
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("fork: %ld children exited 0\n", good);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100;
	if (argc > 3 && !strcmp(argv[1], "fork"))
		return forks(n, argv[3]);
	if (argc < 2 || strcmp(argv[1], "jump"))
		return 2;
	for (long i = 0; i < n; i++)
		dl_iterate_phdr(callback_return, NULL);
	if (!setjmp(back))
		dl_iterate_phdr(callback_leave, NULL);
	for (long i = 0; i < n; i++)
		site_after();
	printf("callbacks: %ld returned, %ld left, %ld after\n", returned, left, n);
	return 0;
}
