/* The main thread leaves with pthread_exit while a worker goes on: 100 ms later the worker
 * calls site_leader 1000 times through call paths 0 to 7 frames deep (stacks new to the
 * profiler, taken after the thread-group leader has exited), then prints a line; the process
 * exits 0 when the worker returns. Usage: prog_leader */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "prog.h"

SITE(site_leader, 9)

static void *worker(void *arg)
{
	(void)arg;
	usleep(100000);
	for (int i = 0; i < 1000; i++)
		prog_rec(i % 8, site_leader);
	puts("leader: 1000 calls after the main thread left");
	fflush(stdout);
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL))
		return 3;
	pthread_exit(NULL);
}
