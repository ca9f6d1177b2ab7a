/* A library whose constructor, before any allocation, takes a snapshot (malloc_freq.h),
 * preloaded after the profiler: it runs before the profiler's constructor, so the call comes
 * before the profiler started. Says on stderr "ctorsnap: snapshot N" (its number), or
 * "ctorsnap: snapshot -1 ERRNO". */
#define _GNU_SOURCE /* strerrorname_np */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "prog_glibc.h"

extern int malloc_freq_snapshot(const char *label) __attribute__((weak));

__attribute__((constructor)) static void ctorsnap_init(void)
{
	char line[96];
	int r = malloc_freq_snapshot ? malloc_freq_snapshot("early") : -1;
	int n = r < 0 ? snprintf(line, sizeof(line), "ctorsnap: snapshot -1 %s\n",
				 malloc_freq_snapshot ? strerrorname_np(errno) : "(no profiler)")
		      : snprintf(line, sizeof(line), "ctorsnap: snapshot %d\n", r);
	if (write(2, line, (size_t)n) < 0) {
	}
}
