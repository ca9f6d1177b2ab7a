/* Asynchronous cancellation, then fork, R rounds: 4 threads with PTHREAD_CANCEL_ASYNCHRONOUS
 * allocate in a loop through recursive call paths that keep changing (each call's path is new
 * to the profiler, which is then in its slow steps most of the time); once all 4 have
 * allocated, main cancels and joins them, then forks a child that calls site_child 10 times
 * and exits 0. A thread may die at any instruction, inside the profiler too; nothing it held
 * may stay held. Needs an async-cancel-safe allocator preloaded after the profiler
 * (tests/progs/bumpalloc.c). Prints "cancel: R rounds, R children exited 0". Usage: prog_cancel R
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prog.h"

SITE(site_spin, 24)
SITE(site_child, 40)

static int running;

/* d frames of left and right, in the order of the bits of path: 2^d different stacks */
static __attribute__((noinline)) void right(int d, unsigned path);
static __attribute__((noinline)) void left(int d, unsigned path)
{
	if (d == 0)
		site_spin();
	else if (path & 1)
		right(d - 1, path >> 1);
	else
		left(d - 1, path >> 1);
	__asm__ volatile("" ::: "memory");
}
static __attribute__((noinline)) void right(int d, unsigned path)
{
	if (d == 0)
		site_spin();
	else if (path & 1)
		right(d - 1, path >> 1);
	else
		left(d - 1, path >> 1);
	__asm__ volatile("" ::: "memory");
}

static void *spin(void *arg)
{
	int old;
	unsigned seed = (unsigned)(long)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
	site_spin();
	__atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0;; i++)
		left(12, i * 2654435761u + seed);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20, ok = 0;
	for (int r = 0; r < rounds; r++) {
		pthread_t t[4];
		running = 0;
		for (long i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, spin, (void *)(i + r)))
				return 3;
		while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) < 4)
			sched_yield();
		usleep((useconds_t)(r * 37 % 200));
		for (int i = 0; i < 4; i++)
			pthread_cancel(t[i]);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		pid_t p = fork();
		if (p == 0) {
			for (int i = 0; i < 10; i++)
				site_child();
			_exit(0);
		}
		int st;
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	printf("cancel: %d rounds, %d children exited 0\n", rounds, ok);
	return 0;
}
