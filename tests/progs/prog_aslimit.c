/* Under a limited address space (RLIMIT_AS), tests/preload/t_settings.sh: ROUNDS times (1), 4
 * threads each call site_small 100 times and end; then main asks for one block of MIB MiB and
 * prints whether it got it ("block ok" or "block failed"), as the program would without the
 * profiler. Usage: prog_aslimit MIB [ROUNDS]
 * With "blocks": blocks of 64 KiB are asked for until one is refused, and their count printed;
 * the heap grows by what each needs (M_TOP_PAD 0), so every 64 KiB of address space taken
 * from the program is a block fewer. Usage: prog_aslimit blocks */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread void *volatile sink;

__attribute__((noinline)) static void site_small(void)
{
	sink = malloc(32);
	free(sink);
}

static void *worker(void *arg)
{
	for (int i = 0; i < 100; i++)
		site_small();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "blocks")) {
		long n = 0;
		mallopt(M_TOP_PAD, 0);
		while (malloc(64 << 10))
			n++;
		printf("%ld\n", n);
		return 0;
	}
	size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 1;
	long rounds = argc > 2 ? atol(argv[2]) : 1;
	pthread_t t[4];
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, worker, NULL))
				return 3;
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	void *volatile block = malloc(mib << 20);
	printf("block %s\n", block ? "ok" : "failed");
	free(block);
	return 0;
}
