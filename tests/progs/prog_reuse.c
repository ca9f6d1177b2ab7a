/* Stacks that share frames with the one before: the cached walk reuses the outer frames of
 * the last capture when nothing above a matching frame changed, and must notice when
 * something did. Each round: relay() is called from two call sites of main (same stack
 * depth, same frames above relay, different return addresses into main), and through
 * framed() (an rbp frame, alloca) from two sites. Counts per site are known: N each.
 * Mode "coro": two coroutines on stacks of their own (makecontext) and main take turns,
 * each allocating N times from its own site: stacks switch between every two captures.
 * Mode "remap": a coroutine recurses 5 levels on a stack that is then unmapped; a second,
 * two levels smaller, is mapped at the same base and recurses 3 levels, so its innermost
 * frames sit where the first's did and the last stack's outer frames are gone.
 * Mode "level": relay_nofp's frames land at one address from two sites of one function,
 * below allocas of different sizes, as an rbp frame sizes its own to reach it: the two stacks
 * differ in one return address and in that frame's rbp (which reaches the allocator through
 * two frames that do not touch rbp), and where site a's stack held its return address, site
 * b's holds it still. N calls from each.
 * Prints "done". Usage: prog_reuse N [coro|remap|level] */
#include <alloca.h>
#include <stdint.h>
#include <ucontext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NOINLINE __attribute__((noinline))
static void *volatile sink;

NOINLINE static void leaf(size_t n)
{
	sink = malloc(n);
	free(sink);
}

NOINLINE static void relay(size_t n)
{
	leaf(n);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

NOINLINE static void framed(size_t n)
{
	char *p = alloca(n + 16); /* rbp-based CFA */
	memset(p, 0, n + 16);
	sink = p;
	relay(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void site_one(long n)
{
	for (long i = 0; i < n; i++) {
		relay(8);
		__asm__ volatile("" ::: "memory");
	}
}

static ucontext_t main_ctx, coro_ctx[2];
static long rounds;

/* The coroutines' outermost frame is glibc's __start_context. */
NOINLINE static void coro_site_0(void)
{
	relay(40);
	__asm__ volatile("" ::: "memory");
}
NOINLINE static void coro_site_1(void)
{
	relay(48);
	__asm__ volatile("" ::: "memory");
}

static void coro(int id)
{
	for (long i = 0; i < rounds; i++) {
		if (id)
			coro_site_1();
		else
			coro_site_0();
		swapcontext(&coro_ctx[id], &main_ctx);
	}
}

NOINLINE static void main_site(void)
{
	relay(56);
	__asm__ volatile("" ::: "memory");
}

static int coros(long n)
{
	static char stacks[2][64 * 1024];
	rounds = n;
	for (int id = 0; id < 2; id++) {
		getcontext(&coro_ctx[id]);
		coro_ctx[id].uc_stack.ss_sp = stacks[id];
		coro_ctx[id].uc_stack.ss_size = sizeof(stacks[id]);
		coro_ctx[id].uc_link = &main_ctx;
		makecontext(&coro_ctx[id], (void (*)(void))coro, 1, id);
	}
	for (long i = 0; i < n; i++)
		for (int id = 0; id < 2; id++) {
			main_site();
			swapcontext(&main_ctx, &coro_ctx[id]);
		}
	puts("done");
	return 0;
}

static uintptr_t level_at[8];
static int levels;

NOINLINE static void recurse(int n)
{
	volatile char pad[8192];
	pad[0] = (char)n;
	level_at[n] = (uintptr_t)__builtin_frame_address(0);
	if (n > 0)
		recurse(n - 1);
	else
		leaf(24);
	__asm__ volatile("" ::: "memory");
}

static void recurse_body(void)
{
	recurse(levels);
}

static void run_on(char *stack, size_t size, int n)
{
	levels = n;
	getcontext(&coro_ctx[0]);
	coro_ctx[0].uc_stack.ss_sp = stack;
	coro_ctx[0].uc_stack.ss_size = size;
	coro_ctx[0].uc_link = &main_ctx;
	makecontext(&coro_ctx[0], recurse_body, 0);
	swapcontext(&main_ctx, &coro_ctx[0]);
}

static int remap(void)
{
	size_t size = 1 << 20;
	char *s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return 1;
	run_on(s, size, 5);
	size_t level = level_at[4] - level_at[3]; /* bytes per level */
	munmap(s, size);
	size -= 2 * level;
	if (mmap(s, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
	    s)
		return 1;
	run_on(s, size, 3);
	puts("done");
	return 0;
}

/* Without a frame pointer (tests/progs/prog_reuse_nofp.c): calls leaf_nofp, which allocates n bytes;
 * rbp passes through these two untouched, from framed_to's frame to the allocator's. */
void relay_nofp(size_t n);

/* Its alloca ends at `to`, whatever the depth it is called from. */
NOINLINE static void framed_to(uintptr_t to)
{
	char here;
	char *p = alloca((uintptr_t)&here - to);
	sink = p;
	relay_nofp(64);
	__asm__ volatile("" ::: "memory");
}

/* Calls framed_to from one of two sites, below an alloca of a size of the site's, not
 * cleared: where site a's call left its return address, site b's stack holds it still. */
NOINLINE static void level_site(uintptr_t to, int b)
{
	char *p = alloca(b ? 1024 : 64);
	p[0] = 0;
	sink = p;
	if (b) {
		__asm__ volatile("# b" ::: "memory");
		framed_to(to); /* level site b */
		__asm__ volatile("# after b" ::: "memory");
	} else {
		__asm__ volatile("# a" ::: "memory");
		framed_to(to); /* level site a */
		__asm__ volatile("# after a" ::: "memory");
	}
}

static int level(long n)
{
	char here;
	uintptr_t to = ((uintptr_t)&here - 8192) & ~(uintptr_t)15;
	for (long i = 0; i < 2 * n; i++) {
		level_site(to, (int)(i & 1)); /* one return address into level */
		__asm__ volatile("" ::: "memory");
	}
	puts("done");
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	if (argc > 2 && !strcmp(argv[2], "coro"))
		return coros(n);
	if (argc > 2 && !strcmp(argv[2], "remap"))
		return remap();
	if (argc > 2 && !strcmp(argv[2], "level"))
		return level(n);
	for (long i = 0; i < n; i++) {
		relay(16); /* call site A */
		__asm__ volatile("" ::: "memory");
		relay(24); /* call site B: same frames above relay, another return address */
		__asm__ volatile("" ::: "memory");
		framed(32); /* call site C */
		__asm__ volatile("" ::: "memory");
		framed((size_t)(i & 1) * 64); /* call site D: an rbp frame of changing size */
		__asm__ volatile("" ::: "memory");
	}
	site_one(n);
	puts("done");
	return 0;
}
