/* Shared by the test programs: a call site that the profiler sees as a frame of its own, and a
 * recursion that reaches one through call paths of a chosen depth. */
#ifndef MF_TEST_PROG_H
#define MF_TEST_PROG_H

#include <stdlib.h>

static __thread void *volatile prog_sink; /* (per thread: sites run in several at once) */

/* A function name(void) that allocates size bytes (and frees them) from a frame of its own. */
#define SITE(name, size)                                                                           \
	__attribute__((noinline)) static void name(void)                                           \
	{                                                                                          \
		prog_sink = malloc(size);                                                          \
		free(prog_sink);                                                                   \
	}

/* Calls site through d frames of prog_rec: stacks that differ in depth, and so are new to the
 * profiler until each depth has been seen. */
__attribute__((noinline, unused)) static void prog_rec(int d, void (*site)(void))
{
	if (d > 0)
		prog_rec(d - 1, site);
	else
		site();
	__asm__ volatile("" ::: "memory"); /* not a tail call: each level keeps its frame */
}

/* Calls site through depth frames of prog_path0 and prog_path1, one for each bit of path
 * (lowest first): 2^depth stacks of one depth, each new to the profiler. */
__attribute__((noinline, unused)) static void prog_path1(int depth, unsigned path,
							 void (*site)(void));
__attribute__((noinline, unused)) static void prog_path0(int depth, unsigned path,
							 void (*site)(void))
{
	if (depth)
		(path & 1 ? prog_path1 : prog_path0)(depth - 1, path >> 1, site);
	else
		site();
	__asm__ volatile("" ::: "memory"); /* not a tail call: each level keeps its frame */
}
__attribute__((noinline, unused)) static void prog_path1(int depth, unsigned path,
							 void (*site)(void))
{
	prog_path0(depth, path, site);
	__asm__ volatile("" ::: "memory");
}

#endif
