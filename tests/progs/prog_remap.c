/* A coroutine stack unmapped and a smaller one mapped at its place (tests/preload/t_unwind_remap.sh).
 * On a 1 MiB stack (mmap), co_a calls site_a through nocfi_tramp (nocfi_tramp.S: no unwind
 * table) with rbp in its own frame; the stack is unmapped, 64 KiB are mapped at its base, and
 * co_b calls site_b through nocfi_tramp with rbp 4 KiB above the new stack's end, where
 * nothing is mapped. Each site allocates once. Prints "done". Usage: prog_remap */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "prog.h"

void nocfi_tramp(void (*fn)(void), void *rbp);

static void *volatile sink;
static __attribute__((noinline)) void site_a(void)
{
	sink = malloc(24);
	free(sink);
}
static __attribute__((noinline)) void site_b(void)
{
	sink = malloc(24);
	free(sink);
}

static ucontext_t mainc, co;
static char *base;
static size_t size;

static __attribute__((noinline)) void co_a(void)
{
	volatile long z[64];
	memset((void *)z, 0, sizeof(z));
	nocfi_tramp(site_a, (void *)&z[32]);
}

static __attribute__((noinline)) void co_b(void)
{
	nocfi_tramp(site_b, base + size + 0x1000);
}

static int run(void (*f)(void))
{
	if (getcontext(&co))
		return -1;
	co.uc_stack.ss_sp = base;
	co.uc_stack.ss_size = size;
	co.uc_link = &mainc;
	makecontext(&co, f, 0);
	return swapcontext(&mainc, &co);
}

int main(void)
{
	size = 1 << 20;
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED || run(co_a) || munmap(base, size))
		return 3;
	size = 64 << 10;
	if (mmap(base, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		 0) != base ||
	    run(co_b))
		return 3;
	puts("done");
	return 0;
}
