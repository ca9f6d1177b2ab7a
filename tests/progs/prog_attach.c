/* A server-like program for malloc_freq --attach and --detach (tests/preload/t_attach.sh): it runs
 * until told to end, doing what each line of its standard input says, and answers each line with
 * one line on standard output (its only output, the same with or without the profiler): a N   N
 * malloc/free pairs at site_main, in the main thread t N   N pairs at site_thread, in a thread
 * started before any line was read f     frees a block allocated at start (before any attach), and
 * one realloc'ed from one e     says whether errno is still what it was set to before the line was
 * read, and whether any MALLOC_FREQ_ variable is in the environment s     says whether every
 * signal's disposition is as it was at start g     says which object the program's malloc leads to
 * now (its GOT slot's, as a function pointer taken from it: libc, or the profiler while attached)
 *   p N   N calls of PLUGIN's plugin_run (N malloc/free pairs at its plugin_site), the library
 *         opened at the first (a library loaded after an attach)
 *   d     says what the program's own malloc_freq_dir returns (built as prog_attach_api, linked
 *         with libmalloc_freq_api: the stub's, whose names gdb may find before the profiler's)
 *   q     ends, with status 7
 * SIGUSR1 is ignored (as by a server; t_attach sends it while gdb runs its calls).
 * Usage: prog_attach PLUGIN < commands */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog.h"
#ifdef PROG_ATTACH_API
#include "malloc_freq.h"
#endif

SITE(site_main, 40)
SITE(site_thread, 56)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long thread_asked, thread_done;

static void *thread_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!thread_asked)
			pthread_cond_wait(&cond, &lock);
		long n = thread_asked;
		pthread_mutex_unlock(&lock);
		for (long i = 0; i < n; i++)
			site_thread();
		pthread_mutex_lock(&lock);
		thread_asked = 0;
		thread_done = 1;
		pthread_cond_broadcast(&cond);
	}
	return NULL;
}

/* Every signal's handler and flags, as one sum. */
static unsigned long dispositions(void)
{
	unsigned long sum = 0;
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (!sigaction(sig, NULL, &sa))
			sum = sum * 31 + (unsigned long)sa.sa_handler + (unsigned long)sa.sa_flags;
	}
	return sum;
}

extern char **environ;

int main(int argc, char **argv)
{
	char line[64];
	void (*plugin_run)(long) = NULL;
	void *before = malloc(100), *moved = malloc(200);
	signal(SIGUSR1, SIG_IGN);
	unsigned long signals = dispositions();
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, NULL))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		errno = 4242;
		if (!fgets(line, sizeof(line), stdin))
			return 3;
		int kept = errno == 4242;
		long n = atol(line + 1);
		switch (line[0]) {
		case 'a':
			for (long i = 0; i < n; i++)
				site_main();
			break;
		case 't':
			pthread_mutex_lock(&lock);
			thread_asked = n, thread_done = 0;
			pthread_cond_broadcast(&cond);
			while (!thread_done)
				pthread_cond_wait(&cond, &lock);
			pthread_mutex_unlock(&lock);
			break;
		case 'f':
			free(before);
			moved = realloc(moved, 300);
			free(moved);
			break;
		case 'e': {
			int found = 0;
			for (char **e = environ; *e; e++)
				found |= !strncmp(*e, "MALLOC_FREQ_", 12);
			printf("errno %s, %s\n", kept ? "kept" : "changed",
			       found ? "MALLOC_FREQ_ in the environment" : "no MALLOC_FREQ_");
			continue;
		}
		case 's':
			printf("signals %s\n",
			       dispositions() == signals ? "as at start" : "changed");
			continue;
		case 'g': {
			void *(*volatile fn)(size_t) = malloc; /* (read from the GOT now) */
			Dl_info info;
			const char *name = dladdr((void *)fn, &info) && info.dli_fname
					       ? strrchr(info.dli_fname, '/')
					       : NULL;
			printf("malloc leads to %s\n", name ? name + 1 : "?");
			continue;
		}
		case 'p':
			if (!plugin_run) {
				void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
				*(void **)&plugin_run = h ? dlsym(h, "plugin_run") : NULL;
			}
			if (!plugin_run)
				return 4;
			plugin_run(n);
			break;
		case 'd':
#ifdef PROG_ATTACH_API
			printf("its malloc_freq_dir %s\n",
			       malloc_freq_dir() ? "names one" : "is NULL");
#else
			printf("no API\n");
#endif
			continue;
		case 'q':
			printf("end\n");
			return 7;
		}
		printf("done %c %ld\n", line[0], n);
	}
}
