/* For the sampling test: THREADS threads each make ROUNDS rounds of a fixed, periodic pattern
 * of calls: 1 from site_p1, 4 from site_p4, 15 from site_p15, 30 from site_p30, 50 from
 * site_p50 (so 1%, 4%, 15%, 30% and 50% of all calls), each site with its own size.
 * Usage: prog_sample THREADS ROUNDS */
#include <pthread.h>
#include <stdlib.h>

static __thread void *volatile sink;
static long rounds;

#define SITE(name, size)                                                                           \
	__attribute__((noinline)) static void name(void)                                           \
	{                                                                                          \
		sink = malloc(size);                                                               \
		free(sink);                                                                        \
	}
SITE(site_p1, 100)
SITE(site_p4, 200)
SITE(site_p15, 300)
SITE(site_p30, 400)
SITE(site_p50, 500)

static void *worker(void *arg)
{
	(void)arg;
	for (long r = 0; r < rounds; r++) {
		site_p1();
		for (int k = 0; k < 4; k++)
			site_p4();
		for (int k = 0; k < 15; k++)
			site_p15();
		for (int k = 0; k < 30; k++)
			site_p30();
		for (int k = 0; k < 50; k++)
			site_p50();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atol(argv[2]) : 1000;
	pthread_t t[16];
	if (n < 1 || n > 16)
		return 2;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
