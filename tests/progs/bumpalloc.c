/* An allocator that a thread may leave at any instruction: preloaded after the profiler by the
 * tests of asynchronous cancellation and of siglongjmp out of signal handlers (glibc's malloc
 * is neither async-cancel-safe nor async-signal-safe, so a plain run would hang in it). A
 * lock-free bump pointer over one large reservation; free does nothing. Never for real use. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define BUMP_RESERVE ((size_t)16 << 30) /* address space only: pages come as they are touched */
#define BUMP_HEADER  16			/* the block's size, then padding to 16 */

static char *bump_base;
static size_t bump_used;

/* The reservation, made once; a thread that loses the race gives its own back. */
static char *bump_arena(void)
{
	char *base = __atomic_load_n(&bump_base, __ATOMIC_ACQUIRE);
	if (base)
		return base;
	char *mine = mmap(NULL, BUMP_RESERVE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mine == MAP_FAILED)
		return NULL;
	if (!__atomic_compare_exchange_n(&bump_base, &base, mine, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		munmap(mine, BUMP_RESERVE);
		return base;
	}
	return mine;
}

static void *bump_aligned(size_t align, size_t n)
{
	char *base = bump_arena();
	if (align < BUMP_HEADER)
		align = BUMP_HEADER;
	if (!base || n > BUMP_RESERVE || (align & (align - 1))) {
		errno = ENOMEM;
		return NULL;
	}
	size_t old = __atomic_load_n(&bump_used, __ATOMIC_RELAXED), start;
	do {
		start = (old + BUMP_HEADER + align - 1) & ~(align - 1);
		if (start + n > BUMP_RESERVE) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&bump_used, &old, start + n, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	((size_t *)(base + start))[-1] = n;
	return base + start; /* fresh anonymous memory: zero */
}

void *malloc(size_t n)
{
	return bump_aligned(0, n);
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t n, size_t m)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return bump_aligned(0, total);
}

void *realloc(void *p, size_t n)
{
	void *q = bump_aligned(0, n);
	if (q && p) {
		size_t old = ((size_t *)p)[-1];
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}

void *reallocarray(void *p, size_t n, size_t m)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align % sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	void *p = bump_aligned(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	return bump_aligned(align, n);
}

void *memalign(size_t align, size_t n)
{
	return bump_aligned(align, n);
}

void *valloc(size_t n)
{
	return bump_aligned(4096, n);
}

void *pvalloc(size_t n)
{
	return bump_aligned(4096, (n + 4095) & ~(size_t)4095);
}

size_t malloc_usable_size(void *p)
{
	return p ? ((size_t *)p)[-1] : 0;
}
