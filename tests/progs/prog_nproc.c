/* A program at its process limit, under an RLIMIT_NPROC of LIMIT (set here; the test runs it as
 * a user of its own, for the kernel does not hold root to it):
 *   threads LIMIT ROUNDS  a pool of threads that grows until the kernel says no, ROUNDS times:
 *                         threads are started one after another, each calling site_start once
 *                         and then waiting, until pthread_create fails with EAGAIN; then all
 *                         are let go and joined. Prints each round's count of threads.
 *   forks LIMIT N         with a second thread and LIMIT - 3 children alive (one slot left),
 *                         N times: a child that exits at once is forked and waited for (the
 *                         profiler writes its end). Prints how many of the N forks failed.
 * Each round of threads starts once the process is alone (a joined thread may count against
 * the limit for a while after pthread_join returns; a child waited for does not).
 * Exits 3 if a thread or child could not be made for another reason than the limit. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prog.h"

SITE(site_start, 24)

enum { MAX_THREADS = 4096 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t let_go = PTHREAD_COND_INITIALIZER;
static int round_over;

static void *pool_thread(void *arg)
{
	site_start();
	pthread_mutex_lock(&lock);
	while (!round_over)
		pthread_cond_wait(&let_go, &lock);
	pthread_mutex_unlock(&lock);
	return arg;
}

/* Waits until the process has `threads` threads: /proc/self/task holds "." and ".." and one
 * directory per thread. */
static void wait_threads(int threads)
{
	struct stat st;
	while (stat("/proc/self/task", &st) == 0 && st.st_nlink > (nlink_t)threads + 2)
		sched_yield();
}

static int pool(int rounds)
{
	static pthread_t threads[MAX_THREADS];
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int r = 0; r < rounds; r++) {
		int n = 0, err = 0;
		wait_threads(1);
		round_over = 0;
		while (n < MAX_THREADS &&
		       (err = pthread_create(&threads[n], &attr, pool_thread, NULL)) == 0)
			n++;
		pthread_mutex_lock(&lock);
		round_over = 1;
		pthread_cond_broadcast(&let_go);
		pthread_mutex_unlock(&lock);
		for (int i = 0; i < n; i++)
			pthread_join(threads[i], NULL);
		if (err != EAGAIN) {
			fprintf(stderr, "prog_nproc: round %d: thread %d: %s\n", r, n,
				strerror(err));
			return 3;
		}
		printf("%s%d", r ? " " : "", n);
	}
	printf("\n");
	return 0;
}

static int forks(int limit, int n)
{
	pthread_t second;
	int hold[2];
	if (pipe(hold) != 0 || pthread_create(&second, NULL, pool_thread, NULL) != 0)
		return 3;
	for (int i = 0; i < limit - 3; i++) {
		pid_t c = fork();
		if (c < 0) {
			perror("prog_nproc: a held child");
			return 3;
		}
		if (c == 0) {
			char b;
			close(hold[1]);
			_exit(read(hold[0], &b, 1) == 0 ? 0 : 1); /* (until the parent is done) */
		}
	}
	int failed = 0;
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		if (c < 0 && errno != EAGAIN) {
			perror("prog_nproc: fork");
			return 3;
		}
		failed += c < 0;
		if (c > 0 && waitpid(c, NULL, 0) != c)
			return 3;
	}
	close(hold[1]);
	while (wait(NULL) > 0)
		;
	pthread_mutex_lock(&lock);
	round_over = 1;
	pthread_cond_broadcast(&let_go);
	pthread_mutex_unlock(&lock);
	pthread_join(second, NULL);
	printf("%d of %d forks failed\n", failed, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	struct rlimit lim = {(rlim_t)atol(argv[2]), (rlim_t)atol(argv[2])};
	if (setrlimit(RLIMIT_NPROC, &lim) != 0) {
		perror("prog_nproc: setrlimit");
		return 3;
	}
	if (!strcmp(argv[1], "threads"))
		return pool(atoi(argv[3]));
	if (!strcmp(argv[1], "forks"))
		return forks(atoi(argv[2]), atoi(argv[3]));
	return 2;
}
