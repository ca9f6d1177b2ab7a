/* Allocates in phases known by their entry point, counts, sizes and pauses: for each argument
 * ENTRY:N:SIZE:MS, N calls of ENTRY (malloc, calloc, realloc, posix_memalign, aligned_alloc)
 * requesting SIZE bytes each (calloc: SIZE elements of 1 byte; realloc: one block resized to
 * SIZE over and over; the aligned ones at 64 bytes), each block freed before the next call of
 * the phase, then a pause of MS milliseconds; the argument "fork" in their place forks a child
 * that makes one malloc call and exits, and waits for it. Makes no other allocation call (stdio is
 * not used: its buffer would be one). Last, "ready" on stdout. Usage: prog_entries
 * ENTRY:N:SIZE:MS|fork ... */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *volatile kept; /* (so no call is optimized away) */

__attribute__((noinline)) static void phase(const char *entry, long n, size_t size)
{
	void *p = NULL;
	for (long i = 0; i < n; i++) {
		if (!strcmp(entry, "malloc")) {
			kept = malloc(size);
		} else if (!strcmp(entry, "calloc")) {
			kept = calloc(size, 1);
		} else if (!strcmp(entry, "realloc")) {
			kept = p = realloc(p, size);
			continue; /* (the one block, freed at the end) */
		} else if (!strcmp(entry, "posix_memalign")) {
			void *q = NULL;
			if (posix_memalign(&q, 64, size))
				_exit(3);
			kept = q;
		} else if (!strcmp(entry, "aligned_alloc")) {
			kept = aligned_alloc(64, size);
		} else {
			_exit(2);
		}
		free(kept);
	}
	free(p);
}

int main(int argc, char **argv)
{
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "fork")) {
			pid_t pid = fork();
			if (pid == 0) {
				kept = malloc(1);
				_exit(0);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				return 1;
			continue;
		}
		char entry[32];
		long n = 0, size = 0, ms = 0;
		const char *c = strchr(argv[a], ':');
		if (!c || (size_t)(c - argv[a]) >= sizeof(entry))
			return 2;
		memcpy(entry, argv[a], (size_t)(c - argv[a]));
		entry[c - argv[a]] = 0;
		char *end;
		n = strtol(c + 1, &end, 10);
		if (*end == ':')
			size = strtol(end + 1, &end, 10);
		if (*end == ':')
			ms = strtol(end + 1, &end, 10);
		phase(entry, n, (size_t)size);
		nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000}, NULL);
	}
	if (write(1, "ready\n", 6) != 6)
		return 1;
	return 0;
}
