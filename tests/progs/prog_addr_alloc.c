/* A program built without PIE that takes the addresses of malloc and free in its code (so its
 * executable holds canonical PLT entries for them: undefined symbols with a value, which dlsym
 * finds) and calls through them N times and directly N times: every call is the C library's,
 * and the profiler sees all 2N mallocs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *(*volatile take_malloc)(size_t);
void (*volatile take_free)(void *);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	take_malloc = malloc; /* (the address in the code: the PLT entry is canonical) */
	take_free = free;
	for (int i = 0; i < n; i++) {
		take_free(take_malloc(24));
		free(malloc(40));
	}
	char line[32];
	int len = snprintf(line, sizeof(line), "done %d\n", n);
	return write(1, line, (size_t)len) == len ? 0 : 1;
}
