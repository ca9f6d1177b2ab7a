/* A daemon's habits: close every descriptor, open its own files (which take the lowest
 * numbers, those the profiler or its libraries may have used), then allocate from threads on
 * fresh stacks and write a known text. At the end the files must hold exactly that text and
 * nothing else. Prints "ok" or what went wrong (to the log file: stdout is closed).
 * Usage: prog_daemon LOGFILE */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 4
#define LINES	2000

static int fds[8];

__attribute__((noinline)) static void site_daemon(int k)
{
	/* a deep, fresh stack: new pages for the unwinder to validate */
	char pad[4096 * 4];
	memset(pad, k, sizeof(pad));
	void *volatile p = malloc(64 + (size_t)pad[k % sizeof(pad)]);
	free(p);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int i = 0; i < LINES; i++) {
		site_daemon(i);
		char line[64];
		int n = snprintf(line, sizeof(line), "worker %d line %d\n", id, i);
		if (write(fds[id], line, (size_t)n) != n)
			abort();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	free(malloc(10)); /* the profiler and its unwinder start before the descriptors go */
	for (int fd = 0; fd < 1024; fd++)
		close(fd);
	char path[4096];
	for (int i = 0; i < THREADS; i++) {
		snprintf(path, sizeof(path), "%s.%d", argv[1], i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fds[i] < 0)
			return 3;
	}
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	int bad = 0;
	for (int i = 0; i < THREADS; i++) {
		lseek(fds[i], 0, SEEK_SET);
		char want[64], got[64];
		for (int k = 0; k < LINES; k++) {
			int n = snprintf(want, sizeof(want), "worker %d line %d\n", i, k);
			if (read(fds[i], got, (size_t)n) != n || memcmp(got, want, (size_t)n))
				bad++;
		}
		if (read(fds[i], got, 1) != 0)
			bad++; /* something was written that we did not write */
	}
	snprintf(path, sizeof(path), "%s.result", argv[1]);
	int r = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	const char *msg = bad ? "corrupt\n" : "ok\n";
	if (r >= 0 && write(r, msg, strlen(msg)) < 0)
		return 4;
	return bad ? 1 : 0;
}
