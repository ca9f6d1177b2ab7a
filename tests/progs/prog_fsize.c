/* A file size limit lowered while the program runs (the kernel answers a write past it with
 * SIGXFSZ, which kills):
 *   exit LIMIT     calls site_exit 100 times, lowers RLIMIT_FSIZE to LIMIT bytes and returns
 *                  from main (whatever the profiler writes at exit must respect it)
 *   thread LIMIT   lowers RLIMIT_FSIZE to LIMIT bytes, then a new thread calls site_thread 100
 *                  times (whatever the profiler writes for it, and says about it on a stderr
 *                  that is a regular file, must respect it)
 * Prints "bye". Usage: prog_fsize exit|thread LIMIT */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "prog.h"

SITE(site_exit, 10)
SITE(site_thread, 20)

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		site_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	struct rlimit r = {(rlim_t)atol(argv[2]), RLIM_INFINITY};
	if (!strcmp(argv[1], "exit")) {
		for (int i = 0; i < 100; i++)
			site_exit();
		setrlimit(RLIMIT_FSIZE, &r);
	} else if (!strcmp(argv[1], "thread")) {
		pthread_t t;
		setrlimit(RLIMIT_FSIZE, &r);
		if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
			return 3;
	} else {
		return 2;
	}
	puts("bye");
	return 0;
}
