/* Descriptors the program counts on, while 2 threads start T short threads each that call
 * site_short once:
 *   emfile T   every descriptor under a lowered RLIMIT_NOFILE (64) is taken but one; main
 *              opens /dev/null and closes it again until the threads are done
 *   lowest T   descriptor 7 is the lowest free one (0 to 20 are taken but 7); main opens
 *              /dev/null and expects 7 each time, until the threads are done
 *   alone T    after a thread has come and gone, T times: a child forked and waited for (the
 *              profiler writes its end), then unshare(CLONE_THREAD), which needs the process
 *              to be one thread (by glibc's unshare and by syscall() in turn)
 * Prints "MODE: F failed of M opens". Usage: prog_fds emfile|lowest|alone T */
#define _GNU_SOURCE /* CLONE_THREAD */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prog.h"

SITE(site_short, 16)

static int per_spawner;
static volatile int spawners_left = 2;

static void *short_lived(void *arg)
{
	(void)arg;
	site_short();
	return NULL;
}

/* T children waited for, each followed by unshare(CLONE_THREAD): how many of those failed. */
static int alone(int rounds)
{
	pthread_t t;
	if (pthread_create(&t, NULL, short_lived, NULL) || pthread_join(t, NULL))
		return -1;
	int failed = 0;
	for (int i = 0; i < rounds; i++) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		if (c < 0 || waitpid(c, NULL, 0) != c)
			return -1;
		/* (glibc's unshare, and syscall() as a program without a wrapper makes it) */
		failed += (i % 2 ? unshare(CLONE_THREAD) : syscall(SYS_unshare, CLONE_THREAD)) != 0;
	}
	return failed;
}

static void *spawner(void *arg)
{
	(void)arg;
	for (int i = 0; i < per_spawner; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_lived, NULL) == 0)
			pthread_join(t, NULL);
	}
	__atomic_sub_fetch(&spawners_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	per_spawner = argc > 2 ? atoi(argv[2]) : 200;
	int emfile = !strcmp(mode, "emfile"), want = -1;
	if (!strcmp(mode, "alone")) {
		int failed = alone(per_spawner);
		if (failed < 0)
			return 3;
		printf("%s: %s\n", mode, failed ? "some unshares failed" : "no unshare failed");
		fprintf(stderr, "%s: %d failed of %d unshares\n", mode, failed, per_spawner);
		return 0;
	}
	if (emfile) {
		struct rlimit r = {64, 64};
		if (setrlimit(RLIMIT_NOFILE, &r))
			return 3;
		int last = -1, fd;
		while ((fd = open("/dev/null", O_RDONLY)) >= 0)
			last = fd;
		if (errno != EMFILE || last < 0)
			return 3;
		close(last); /* the one free slot */
	} else if (!strcmp(mode, "lowest")) {
		int null = open("/dev/null", O_RDONLY);
		for (int fd = 0; fd <= 20; fd++)
			if (null < 0 || (fd != 7 && fcntl(fd, F_GETFD) < 0 && dup2(null, fd) != fd))
				return 3;
		close(7);
		want = 7;
	} else {
		return 2;
	}
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, spawner, NULL))
			return 4;
	long opens = 0, failed = 0;
	while (__atomic_load_n(&spawners_left, __ATOMIC_ACQUIRE)) {
		int fd = open("/dev/null", O_RDONLY);
		opens++;
		if (fd < 0 || (want >= 0 && fd != want))
			failed++;
		if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%s: %s\n", mode, failed ? "some opens failed" : "no open failed");
	fprintf(stderr, "%s: %ld failed of %ld opens\n", mode, failed, opens);
	return 0;
}
