/* Run with an allocator preloaded after the profiler, or before it: calls nine entry points a
 * known number of times from their own sites (SITE_CALLS(i) each), has THREADS threads call
 * malloc THREAD_CALLS times each (site_thread), then asks the allocator
 * itself whether it served the memory (jemalloc's thread.allocated, tcmalloc's
 * current_allocated_bytes, mimalloc's mi_is_in_heap_region) and prints what it found.
 * pvalloc's blocks are kept: an allocator without pvalloc (jemalloc) leaves the call to
 * glibc's, whose block it cannot free. Usage: prog_allocator */
#define _GNU_SOURCE /* RTLD_DEFAULT (glibc before 2.34 declares it only so) */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SITE_CALLS(i) (50 * ((i) + 1))
static void *volatile sink;
static void keep(void *p)
{
	sink = p;
	free(sink);
}

__attribute__((noinline)) static void site_malloc(void)
{
	keep(malloc(100));
}
__attribute__((noinline)) static void site_calloc(void)
{
	keep(calloc(10, 10));
}
__attribute__((noinline)) static void site_realloc(void)
{
	keep(realloc(NULL, 100));
}
__attribute__((noinline)) static void site_posix_memalign(void)
{
	void *p;
	if (!posix_memalign(&p, 64, 100))
		keep(p);
}
__attribute__((noinline)) static void site_aligned_alloc(void)
{
	keep(aligned_alloc(64, 128));
}
__attribute__((noinline)) static void site_memalign(void)
{
	keep(memalign(64, 100));
}
__attribute__((noinline)) static void site_valloc(void)
{
	keep(valloc(100));
}
__attribute__((noinline)) static void site_reallocarray(void)
{
	keep(reallocarray(malloc(16), 10, 10)); /* (the allocator's block, moved) */
}
__attribute__((noinline)) static void site_pvalloc(void)
{
	sink = pvalloc(100);
}

enum { THREADS = 4, THREAD_CALLS = 1000 };
__attribute__((noinline)) static void site_thread(void)
{
	keep(malloc(48));
}
static void *thread_main(void *arg)
{
	(void)arg;
	for (int k = 0; k < THREAD_CALLS; k++)
		site_thread();
	return NULL;
}

static void (*const sites[])(void) = {site_malloc,	   site_calloc,	       site_realloc,
				      site_posix_memalign, site_aligned_alloc, site_memalign,
				      site_valloc,	   site_reallocarray,  site_pvalloc};

/* Bytes the preloaded allocator says it has handed out, or -1 if it is not one we know. */
static long long allocator_bytes(const char **name)
{
	int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
	    (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
	int (*tc)(const char *, size_t *) = (int (*)(const char *, size_t *))dlsym(
	    RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
	if (mallctl) {
		uint64_t v = 0;
		size_t len = sizeof(v);
		*name = "jemalloc";
		return mallctl("thread.allocated", &v, &len, NULL, 0) == 0 ? (long long)v : -1;
	}
	if (tc) {
		size_t v = 0;
		*name = "tcmalloc";
		return tc("generic.current_allocated_bytes", &v) ? (long long)v : -1;
	}
	*name = "glibc";
	return -1;
}

int main(void)
{
	for (unsigned i = 0; i < sizeof(sites) / sizeof(sites[0]); i++)
		for (int k = 0; k < SITE_CALLS(i); k++)
			sites[i]();
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	const char *name;
	long long before = allocator_bytes(&name);
	void *big = malloc(1 << 22);
	long long after = allocator_bytes(&name);
	int served = before >= 0 && after - before >= (1 << 22);
	int (*mi_owns)(const void *) =
	    (int (*)(const void *))dlsym(RTLD_DEFAULT, "mi_is_in_heap_region");
	if (mi_owns) {
		name = "mimalloc";
		served = mi_owns(big);
	}
	printf("allocator %s served the memory: %s\n", name, served ? "yes" : "no");
	free(big);
	return 0;
}
