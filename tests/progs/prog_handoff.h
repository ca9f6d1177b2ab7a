/* Shared by the programs whose blocks one thread makes and another frees
 * (prog_life_handoff.c, prog_life_seccomp.c): the site of the blocks handed over, and one of
 * blocks freed at once by the thread that made them. */
#ifndef MF_TEST_PROG_HANDOFF_H
#define MF_TEST_PROG_HANDOFF_H

#include <stdlib.h>

__attribute__((noinline, unused)) static void *site_handed(long i)
{
	void *volatile p = malloc(16 + (size_t)(i & 63)); /* (no tail call: the frame stays) */
	return p;
}

__attribute__((noinline, unused)) static void site_temp(long i)
{
	void *volatile p = malloc(24 + (size_t)(i & 7));
	free(p);
}

#endif
