/* A real-time thread and an ordinary one on one processor (tests/preload/t_hazards.sh): the thread
 * at SCHED_FIFO priority 10 allocates and frees 8 blocks ROUNDS times (20,000) at site_fifo,
 * sleeping 50 us every 10 rounds; main allocates and frees meanwhile at site_main until it is done.
 * When the real-time thread wakes it takes the processor from main, maybe while main holds
 * a lock of the profiler's: a wait for it that only yields would never let main run again to
 * release it. Prints "done", or "no SCHED_FIFO" where that is not allowed.
 * Usage: prog_fifo [ROUNDS] */
#define _GNU_SOURCE /* sched_setaffinity */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile int stop;
static long rounds = 20000;

/* (distinct sizes: identical functions would be folded into one) */
#define SITE(name, base)                                                                           \
	NOINLINE static void name(void)                                                            \
	{                                                                                          \
		void *volatile p[8];                                                               \
		for (int k = 0; k < 8; k++)                                                        \
			p[k] = malloc((base) + (size_t)k * 16);                                    \
		for (int k = 0; k < 8; k++)                                                        \
			free(p[k]);                                                                \
	}
SITE(site_fifo, 32)
SITE(site_main, 40)

static void *fifo(void *arg)
{
	struct sched_param sp = {.sched_priority = 10};
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		puts("no SCHED_FIFO");
		exit(0);
	}
	for (long i = 0; i < rounds; i++) {
		site_fifo();
		if (i % 10 == 0)
			usleep(50);
	}
	stop = 1;
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	pthread_t t;
	if (pthread_create(&t, NULL, fifo, NULL))
		return 3;
	while (!stop)
		site_main();
	pthread_join(t, NULL);
	puts("done");
	return 0;
}
