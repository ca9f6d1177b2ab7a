/* Short threads whose files a snapshot packs (ended.pack), with counts known by construction;
 * each short thread calls site_short 10 times.
 *   ended N        N short threads, 8 at a time, all joined; snapshot 1 (malloc_freq_snapshot:
 *                  it packs them); N more, joined; then prints "ready" and waits (for the
 *                  test's SIGKILL; exits 0 after 60 s)
 *   rounds N HOW   a long thread calls site_long 5 times and waits; round 1: N short threads,
 *                  joined, snapshot 1; round 2: the long thread calls site_long 5 more times
 *                  and ends (joined), N short threads, snapshot 2; round 3: N short threads,
 *                  snapshot 3. HOW: api (malloc_freq_snapshot: full snapshots) or signal
 *                  (SIGUSR2, started with MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2: snap.N.signal, each
 *                  building on the one before; waited for until its directory appears)
 *   strict         a thread calls site_short 10 times, enters seccomp strict mode and returns
 *                  (the kernel ends it; its file stays mapped and listed); then snapshots 1
 *                  and 2 by SIGUSR2 (as rounds' signal) and 3 by malloc_freq_snapshot; exits 0
 *                  (3 if strict mode is refused)
 * Usage: prog_pack ended N | rounds N api|signal | strict */
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "malloc_freq.h"
#include "prog.h"

#pragma weak malloc_freq_snapshot
#pragma weak malloc_freq_dir

SITE(site_short, 16)
SITE(site_long, 24)

static void *short_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++)
		site_short();
	return NULL;
}

static int shorts(long n)
{
	pthread_t t[8];
	for (long done = 0; done < n;) {
		int k = 0;
		for (; k < 8 && done + k < n; k++)
			if (pthread_create(&t[k], NULL, short_thread, NULL))
				return 1;
		for (int i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		done += k;
	}
	return 0;
}

static pthread_barrier_t bar;
static void *long_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++)
		site_long();
	pthread_barrier_wait(&bar); /* 5 made */
	pthread_barrier_wait(&bar); /* snapshot 1 taken */
	for (int i = 0; i < 5; i++)
		site_long();
	return NULL;
}

/* Snapshot number n: 0, or 1 if it could not be taken. */
static int snap(int n, int by_signal)
{
	if (!by_signal)
		return malloc_freq_snapshot(NULL) == n ? 0 : 1;
	char path[4096];
	snprintf(path, sizeof(path), "%s/snap.%d.signal", malloc_freq_dir(), n);
	raise(SIGUSR2);
	for (int i = 0; i < 10000; i++, usleep(1000))
		if (access(path, F_OK) == 0)
			return 0;
	fprintf(stderr, "prog_pack: no %s\n", path);
	return 1;
}

static int rounds(long n, int by_signal)
{
	pthread_t l;
	pthread_barrier_init(&bar, NULL, 2);
	if (pthread_create(&l, NULL, long_thread, NULL))
		return 1;
	pthread_barrier_wait(&bar);
	if (shorts(n) || snap(1, by_signal))
		return 1;
	pthread_barrier_wait(&bar);
	pthread_join(l, NULL);
	if (shorts(n) || snap(2, by_signal) || shorts(n) || snap(3, by_signal))
		return 1;
	return 0;
}

static void *strict_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++)
		site_short();
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		return (void *)1;
	return NULL; /* (glibc's end of the thread makes a system call: the kernel kills it) */
}

/* A thread confined and gone, its file still listed: then two chained snapshots and a full. */
static int strict(void)
{
	pthread_t t;
	void *r = NULL;
	if (pthread_create(&t, NULL, strict_thread, NULL) || pthread_join(t, &r))
		return 1;
	if (r)
		return 3;
	return snap(1, 1) || snap(2, 1) || snap(3, 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "ended")) {
		if (shorts(atol(argv[2])) || snap(1, 0) || shorts(atol(argv[2])))
			return 1;
		printf("ready\n");
		fflush(stdout);
		for (unsigned left = 60; left;) /* (a snapshot's signal cuts a sleep short) */
			left = sleep(left);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "rounds"))
		return rounds(atol(argv[2]), !strcmp(argv[3], "signal"));
	if (argc == 2 && !strcmp(argv[1], "strict"))
		return strict();
	fprintf(stderr, "usage: prog_pack ended N | rounds N api|signal | strict\n");
	return 2;
}
