/* A fork with a batch of live bytes pending (tests/preload/t_life_peak.sh): with an idle thread
 * running, so that live bytes go into the process's sum by batches, the parent allocates 2 x
 * 40,000 bytes (a batch: counted), then frees one block (-40,000: still pending in its
 * thread) and forks. The child starts from an empty map and a live sum of 0: allocates 100
 * bytes, starts a thread and ends its main thread (which counts what it has pending), whose
 * thread starts one more that allocates 100 bytes. The child's peak is a few hundred bytes;
 * a child that kept the parent's pending -40,000 went below zero, and its next count made
 * a peak of nearly 2^64 bytes.
 * Usage: prog_life_fork */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int fds[2];
static void *volatile sink;

static void *idle(void *arg)
{
	char c;
	if (read(fds[0], &c, 1) < 0)
		abort();
	return arg;
}

static void *small(void *arg)
{
	sink = malloc(100);
	return arg;
}

static void *child_main(void *arg)
{
	pthread_t u;
	if (pthread_create(&u, NULL, small, NULL) || pthread_join(u, NULL))
		abort();
	exit(0);
	return arg;
}

int main(void)
{
	pthread_t t;
	if (pipe(fds) || pthread_create(&t, NULL, idle, NULL))
		abort();
	void *volatile a = malloc(40000), *volatile b = malloc(40000);
	free(a);
	pid_t pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		sink = malloc(100);
		pthread_t u;
		if (pthread_create(&u, NULL, child_main, NULL))
			abort();
		pthread_exit(NULL);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || write(fds[1], "x", 1) != 1 || pthread_join(t, NULL))
		abort();
	free(b);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
