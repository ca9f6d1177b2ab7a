/* Prints errno as main starts (what the loader and the constructors left, the profiler's
 * included), what each allocation entry point returns and what it leaves in errno, for edge
 * values, and the signal mask the program set around them (the profiler blocks signals for a
 * while when it learns new return addresses); a test compares this output with and without
 * the profiler. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;
/* SIZE_MAX, read at run time: the compiler cannot see (and warn of) the sizes too large */
static volatile size_t huge = SIZE_MAX;

#define SHOW(what, expr)                                                                           \
	do {                                                                                       \
		errno = 4242;                                                                      \
		void *p_ = (expr);                                                                 \
		printf("%-36s %s errno=%d\n", what, p_ ? "ptr" : "NULL", errno);                   \
		sink = p_;                                                                         \
		free(sink);                                                                        \
	} while (0)

/* The blocked signals (of the first 31), as the program set them. */
static void show_mask(const char *when)
{
	sigset_t m;
	sigprocmask(SIG_SETMASK, NULL, &m);
	printf("%-36s", when);
	for (int s = 1; s < 32; s++)
		if (sigismember(&m, s))
			printf(" %d", s);
	printf("\n");
}

int main(void)
{
	printf("%-36s errno=%d\n", "errno as main starts", errno);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	SHOW("malloc(16)", malloc(16));
	show_mask("blocked after the first malloc:");
	SHOW("malloc(SIZE_MAX)", malloc(huge));
	SHOW("calloc(SIZE_MAX/2, 4) overflow", calloc(huge / 2, 4));
	SHOW("calloc(4, 4)", calloc(4, 4));
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, NULL);
	SHOW("reallocarray(NULL, SIZE_MAX/2, 4)", reallocarray(NULL, huge / 2, 4));
	SHOW("aligned_alloc(64, 128)", aligned_alloc(64, 128));
	SHOW("memalign(64, 100)", memalign(64, 100));
	SHOW("valloc(10)", valloc(10));
	SHOW("pvalloc(10)", pvalloc(10));
	void *p = NULL;
	errno = 4242;
	int r = posix_memalign(&p, 3, 64);
	printf("%-36s r=%d errno=%d\n", "posix_memalign(align 3)", r, errno);
	errno = 4242;
	r = posix_memalign(&p, 64, 64);
	printf("%-36s r=%d errno=%d\n", "posix_memalign(align 64)", r, errno);
	free(p);
	errno = 4242;
	p = malloc(10);
	void *q = realloc(p, 0);
	printf("%-36s %s errno=%d\n", "realloc(p, 0)", q ? "ptr" : "NULL", errno);
	free(q);
	errno = 4242;
	free(NULL);
	printf("%-36s errno=%d\n", "free(NULL)", errno);
	show_mask("blocked after them, SIGUSR2 blocked:");
	/* usable sizes of every kind of block, as the allocator reports them */
	void *blocks[] = {malloc(10),	     calloc(3, 7), realloc(NULL, 30), aligned_alloc(64, 64),
			  memalign(128, 10), valloc(10),   pvalloc(10)};
	for (unsigned i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
		printf("malloc_usable_size(block %u) = %zu\n", i, malloc_usable_size(blocks[i]));
		free(blocks[i]);
	}
	/* under a small RLIMIT_AS (the test sets it) large requests fail: same NULL, same errno */
	errno = 4242;
	void *big = malloc((size_t)1 << 30);
	printf("%-36s %s errno=%d\n", "malloc(1 GiB)", big ? "ptr" : "NULL", errno);
	free(big);
	errno = 4242;
	big = calloc((size_t)1 << 20, 1024);
	printf("%-36s %s errno=%d\n", "calloc(1 Mi, 1 KiB)", big ? "ptr" : "NULL", errno);
	free(big);
	return 0;
}
