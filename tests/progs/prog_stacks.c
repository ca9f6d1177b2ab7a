/* Allocation on small stacks, each with a guard page below it (an overflow faults at once):
 *   coro SIZE N   4 coroutines (makecontext/swapcontext) on SIZE-byte stacks each call
 *                 site_coro N times through call paths 0 to 7 frames deep
 *   alt SIZE N    a SIGUSR1 handler on a SIZE-byte sigaltstack calls site_handler through
 *                 paths 0 to 7 frames deep, N signals; SIZE "min" is sysconf(_SC_MINSIGSTKSZ)
 *                 (the kernel's signal frame) plus the legacy MINSIGSTKSZ for the handler
 *   used N        how much of a 64 KiB coroutine stack the program's calls take, with
 *                 whatever runs inside them: a new thread's first N calls (site_coro
 *                 through new paths), N calls again from the same paths, then 8 SIGUSR1
 *                 handlers (site_handler) on that stack, then 24 rounds of 64 calls from
 *                 known paths 12 ms apart (a timeline of 10 ms writes its records there, and
 *                 reserves its header's room); prints "first: B bytes, again: B bytes,
 *                 handler: B bytes, timeline: B bytes"
 * The program's first allocation is made on the small stack (it is linked with -z now, so
 * that its own lazy binding does not run there). Prints what it did.
 * Usage: prog_stacks coro|alt SIZE N | prog_stacks used N */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "prog.h"

SITE(site_coro, 48)
SITE(site_handler, 56)

enum { COROS = 4, PAINT = 0x5a, USED_STACK = 64 << 10 };

static ucontext_t main_uc, co_uc[COROS];
static int rounds;
static volatile int handled;

/* size usable bytes with a PROT_NONE page below them; returns their lowest address. */
static char *stack_new(size_t size)
{
	size_t page = (size_t)getpagesize(), span = (size + 2 * page - 1) / page * page;
	char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p, page, PROT_NONE))
		return NULL;
	return p + span - size;
}

static void co_body(int id)
{
	for (int i = 0; i < rounds; i++) {
		prog_rec((i + id) % 8, site_coro);
		swapcontext(&co_uc[id], &main_uc);
	}
}

static void on_usr1(int sig)
{
	(void)sig;
	prog_rec(handled % 8, site_handler);
	handled++;
}

static int coro_make(int id, size_t size)
{
	char *stack = stack_new(size);
	if (!stack || getcontext(&co_uc[id]))
		return -1;
	co_uc[id].uc_stack.ss_sp = stack;
	co_uc[id].uc_stack.ss_size = size;
	co_uc[id].uc_link = &main_uc;
	makecontext(&co_uc[id], (void (*)(void))co_body, 1, id);
	return 0;
}

static int coro(size_t size)
{
	for (int id = 0; id < COROS; id++)
		if (coro_make(id, size))
			return 3;
	for (int i = 0; i < rounds; i++)
		for (int id = 0; id < COROS; id++)
			swapcontext(&main_uc, &co_uc[id]);
	printf("coro: %d calls on %zu-byte stacks\n", COROS * rounds, size);
	return 0;
}

static int alt(size_t size)
{
	stack_t ss = {.ss_sp = stack_new(size), .ss_size = size};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (!ss.ss_sp || sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL))
		return 3;
	for (int i = 0; i < rounds; i++)
		raise(SIGUSR1);
	printf("alt: %d calls on a %zu-byte signal stack\n", (int)handled, size);
	return 0;
}

/* ---- used: the deepest byte of a painted stack that was written ---- */
static char *used_stack;
static int used_first, used_again, used_handler, used_timeline;

/* How far down from its top the stack was written since it was painted; paints it again
 * below this frame. */
static __attribute__((noinline)) int stack_used(void)
{
	char here;
	int i = 0;
	while (i < USED_STACK && used_stack[i] == PAINT)
		i++;
	memset(used_stack, PAINT, (size_t)(&here - used_stack) - 256);
	return USED_STACK - i;
}

static void used_body(void)
{
	stack_used();
	for (int i = 0; i < rounds; i++)
		prog_rec(i % 8, site_coro);
	used_first = stack_used();
	for (int i = 0; i < rounds; i++)
		prog_rec(i % 8, site_coro);
	used_again = stack_used();
	for (int i = 0; i < 8; i++)
		raise(SIGUSR1);
	used_handler = stack_used();
	for (int r = 0; r < 24; r++) {
		for (int i = 0; i < 64; i++)
			prog_rec(i % 8, site_coro);
		nanosleep(&(struct timespec){0, 12000000}, NULL);
	}
	used_timeline = stack_used();
}

static void *used_thread(void *arg)
{
	(void)arg;
	ucontext_t uc;
	if (getcontext(&uc))
		return NULL;
	uc.uc_stack.ss_sp = used_stack;
	uc.uc_stack.ss_size = USED_STACK;
	uc.uc_link = &main_uc;
	makecontext(&uc, used_body, 0);
	swapcontext(&main_uc, &uc);
	return NULL;
}

static int used(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	pthread_t t;
	if (!(used_stack = stack_new(USED_STACK)) || sigaction(SIGUSR1, &sa, NULL))
		return 3;
	if (pthread_create(&t, NULL, used_thread, NULL) || pthread_join(t, NULL))
		return 3;
	printf("first: %d bytes, again: %d bytes, handler: %d bytes, timeline: %d bytes\n",
	       used_first, used_again, used_handler, used_timeline);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "used") && argc > 2) {
		rounds = atoi(argv[2]);
		return used();
	}
	if (argc < 4)
		return 2;
	/* The kernel's signal frame, as it tells (Linux 5.14 on, what glibc 2.34's
	 * sysconf(_SC_MINSIGSTKSZ) answers), else the legacy constant (2048 on x86-64: less than
	 * a frame with AVX-512's registers) */
	size_t min = (size_t)getauxval(51 /* AT_MINSIGSTKSZ */);
	if (min < MINSIGSTKSZ)
		min = MINSIGSTKSZ;
	size_t size = !strcmp(argv[2], "min") ? min + 2048 : (size_t)atol(argv[2]);
	rounds = atoi(argv[3]);
	if (!strcmp(mode, "coro"))
		return coro(size);
	if (!strcmp(mode, "alt"))
		return alt(size);
	return 2;
}
