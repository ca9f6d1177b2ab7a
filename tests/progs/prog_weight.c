/* MALLOC_FREQ_WEIGHT=time with CPU time known by construction: N times, about W ms of CPU
 * work then a call at site_slow, then a call at site_fast at once. Prints the thread's CPU
 * time at the end in ns ("cpu NS"). Usage: prog_weight N W */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "prog.h"

SITE(site_slow, 16)
SITE(site_fast, 32)

static unsigned long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[1]);
	double w = atof(argv[2]);
	volatile unsigned long spin = 0;
	for (long i = 0; i < n; i++) {
		unsigned long long until = cpu_ns() + (unsigned long long)(w * 1e6);
		while (cpu_ns() < until)
			spin++;
		site_slow();
		site_fast();
	}
	printf("cpu %llu\n", cpu_ns());
	return 0;
}
