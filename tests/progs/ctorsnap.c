/* A library whose constructor, before any allocation, takes a snapshot (malloc_freq.h),
 * preloaded after the profiler: it runs before the profiler's constructor, so the calls come
 * before the profiler started. With CTORSNAP_DISABLE set, it first turns recording off
 * (malloc_freq_disable). Says on stderr "ctorsnap: snapshot N, errno kept" (its number, and
 * whether errno, set before the call, is as it was), or "ctorsnap: snapshot -1 ERRNO". */
#define _GNU_SOURCE /* strerrorname_np */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog_glibc.h"

extern int malloc_freq_snapshot(const char *label) __attribute__((weak));
extern void malloc_freq_disable(void) __attribute__((weak));

__attribute__((constructor)) static void ctorsnap_init(void)
{
	char line[96];
	if (!malloc_freq_snapshot || !malloc_freq_disable) {
		if (write(2, "ctorsnap: no profiler\n", 22) < 0) {
		}
		return;
	}
	if (getenv("CTORSNAP_DISABLE"))
		malloc_freq_disable();
	errno = EDOM;
	int r = malloc_freq_snapshot("early");
	int n = r < 0 ? snprintf(line, sizeof(line), "ctorsnap: snapshot -1 %s\n",
				 strerrorname_np(errno))
		      : snprintf(line, sizeof(line), "ctorsnap: snapshot %d, errno %s\n", r,
				 errno == EDOM ? "kept" : strerrorname_np(errno));
	if (write(2, line, (size_t)n) < 0) {
	}
}
