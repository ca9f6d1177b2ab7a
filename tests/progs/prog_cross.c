/* Calls known by construction, with an inlined frame, for reading a profile on another
 * processor (t_cross_arch.sh): N mallocs of 16..23 bytes, each freed at once, through
 *   main -> run -> site -> inlined (always inlined into site) -> malloc
 * Usage: prog_cross N */
#include <stdlib.h>

static inline __attribute__((always_inline)) void *inlined(size_t n)
{
	return malloc(n); /* line:inlined */
}

__attribute__((noinline)) void *site(size_t n)
{
	void *p = inlined(n); /* line:site */
	__asm__ volatile("" ::"r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void run(int n)
{
	for (int i = 0; i < n; i++)
		free(site(16 + i % 8)); /* line:run */
}

int main(int argc, char **argv)
{
	run(argc > 1 ? atoi(argv[1]) : 1000);
	return 0;
}
