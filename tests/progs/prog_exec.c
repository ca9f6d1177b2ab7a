/* Allocates N times from site_before_exec, then execs itself as stage 2, which allocates M
 * times from site_after_exec. Usage: prog_exec N M */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void site_before_exec(void)
{
	sink = malloc(24);
	free(sink);
}

__attribute__((noinline)) static void site_after_exec(void)
{
	sink = malloc(40);
	free(sink);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[3], "stage2")) {
		for (long i = 0; i < atol(argv[2]); i++)
			site_after_exec();
		return 0;
	}
	if (argc != 3)
		return 2;
	for (long i = 0; i < atol(argv[1]); i++)
		site_before_exec();
	execl("/proc/self/exe", argv[0], argv[1], argv[2], "stage2", (char *)NULL);
	return 3;
}
