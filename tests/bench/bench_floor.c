/* make bench's "floor": the least any allocation profiler that preloads itself costs. Each
 * allocation entry point counts the call down in a thread-local counter (as a sampling
 * profiler's passed-over call does) and calls glibc's allocator; free calls it at once. No
 * stack, no file, no lock: the row it gives is what interposing itself costs each workload. */
#include <stddef.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

static __thread long countdown = 1L << 62;

void *malloc(size_t n)
{
	countdown--;
	return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	countdown--;
	return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	countdown--;
	return __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
	countdown--;
	return __libc_memalign(align, n);
}

void free(void *p)
{
	__libc_free(p);
}
