/* A program linked with -lmalloc_freq_api (the stub; built twice, with the shared and the static
 * library): the same binary must run unchanged without the profiler and be profiled with it.
 * A calls at site_outside, then malloc_freq_enable, B calls at site_inside,
 * malloc_freq_disable, A more at site_outside. Prints what its work computed ("sum"), the
 * profile directory ("dir" or "dir none") and what malloc_freq_stats said ("stats RC ERRNO
 * MALLOC-CALLS OFF-CALLS"). Usage: prog_api A B */
#define _GNU_SOURCE /* strerrorname_np */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_freq.h"
#include "prog_glibc.h"

static unsigned long sum;

#define SITE(name, size)                                                                           \
	__attribute__((noinline)) static void name(void)                                           \
	{                                                                                          \
		unsigned char *p = malloc(size);                                                   \
		memset(p, (int)(sum & 0xff), size);                                                \
		sum = sum * 31 + p[size - 1] + size;                                               \
		free(p);                                                                           \
	}
SITE(site_outside, 24)
SITE(site_inside, 48)

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long a = atol(argv[1]), b = atol(argv[2]);
	const char *dir = malloc_freq_dir();
	for (long i = 0; i < a; i++)
		site_outside();
	malloc_freq_enable();
	for (long i = 0; i < b; i++)
		site_inside();
	malloc_freq_disable();
	for (long i = 0; i < a; i++)
		site_outside();
	struct malloc_freq_stats s;
	errno = 0;
	int rc = malloc_freq_stats(&s);
	int err = errno;
	printf("sum %lu\ndir %s\nstats %d %s %llu %llu\n", sum, dir ? dir : "none", rc,
	       err ? strerrorname_np(err) : "0", (unsigned long long)s.calls[0],
	       (unsigned long long)s.calls_off);
	return 0;
}
