/* The API's functions, linked with the static stub and run without the profiler, from a
 * program with its own malloc: prints how many allocations the calls made, "mallocs N" (the
 * header promises none through the program's malloc: a call may come from a signal handler
 * that interrupted it). */
#include <stdio.h>
#include <stdlib.h>

#include "malloc_freq.h"

extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static volatile int counted, counting;

void *malloc(size_t n)
{
	counted += counting;
	return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
	counted += counting;
	return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
	counted += counting;
	return __libc_realloc(p, n);
}
void free(void *p)
{
	__libc_free(p);
}

int main(void)
{
	struct malloc_freq_stats s;
	counting = 1;
	(void)malloc_freq_dir();
	malloc_freq_enable();
	malloc_freq_disable();
	malloc_freq_thread_enable();
	malloc_freq_thread_disable();
	(void)malloc_freq_stats(&s);
	(void)malloc_freq_snapshot("x");
	(void)malloc_freq_reset();
	malloc_freq_tag_push("t");
	malloc_freq_tag_pop();
	counting = 0;
	printf("mallocs %d\n", counted);
	return 0;
}
