/* Fork from a process with a second thread alive: the parent allocates P times before and P
 * after the fork from site_parent, the child C times from site_child. Prints the child's pid.
 * Usage: prog_fork P C */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void site_parent(void)
{
	sink = malloc(16);
	free(sink);
}

__attribute__((noinline)) static void site_child(void)
{
	sink = malloc(32);
	free(sink);
}

static void *idle(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

int main(int argc, char **argv)
{
	long p = argc > 2 ? atol(argv[1]) : 100, c = argc > 2 ? atol(argv[2]) : 100;
	pthread_t t;
	pthread_create(&t, NULL, idle, NULL);
	for (long i = 0; i < p; i++)
		site_parent();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		for (long i = 0; i < c; i++)
			site_child();
		exit(0);
	}
	for (long i = 0; i < p; i++)
		site_parent();
	int st;
	waitpid(pid, &st, 0);
	printf("child %d\n", (int)pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 4;
}
