/* Many distinct call stacks, to make a profile file grow: 1000 call sites (each call below is
 * its own return address) reached at N recursion depths, one malloc each: 1000 x N calls.
 * Mode "chdir" changes to / before allocating. Prints "done". Usage: prog_deep N [chdir] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void site_leaf(void)
{
	sink = malloc(8);
	free(sink);
}

#define C10(x) x x x x x x x x x x
__attribute__((noinline)) static void many_sites(void)
{
	C10(C10(C10(site_leaf();)))
}

__attribute__((noinline)) static void descend(int d)
{
	if (d > 0) {
		descend(d - 1);
		__asm__ volatile("" ::: "memory"); /* no tail call: one frame per level */
	} else {
		many_sites();
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	if (argc > 2 && !strcmp(argv[2], "chdir") && chdir("/"))
		return 3;
	for (int d = 0; d < n; d++)
		descend(d);
	printf("done\n");
	return 0;
}
