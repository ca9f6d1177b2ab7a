/* A program of known counts for the outputs read by other tools (pprof, JSON, Graphviz) and
 * for --diff. Threads run one after the other:
 *   main thread          site_main: 100 calls of malloc(10)
 *   thread "worker_a"    site_a: N calls of malloc(100) through alloc_inl (inlined into it),
 *                        and site_shared: 50 calls of malloc(8)
 *   thread "worker_b"    site_b: 300 calls of calloc(1, 1000), and site_shared: 50 calls
 * and by mode: "base" (N = 200, site_gone: 40 calls of malloc(16)) or "new" (N = 250,
 * site_new: 70 calls of malloc(32)), both in the main thread. Built with -DMF_SHIFTED its
 * code lies at other addresses (a build of the same program that differs). Usage:
 * prog_outputs base|new */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static __thread void *volatile sink;

#ifdef MF_SHIFTED
__attribute__((used, noinline)) static void padding(void)
{
	__asm__ volatile(".skip 12288, 0x90");
}
#endif

static inline __attribute__((always_inline)) void alloc_inl(size_t n)
{
	sink = malloc(n);
	free(sink);
}

#define SITE(name, call)                                                                           \
	__attribute__((noinline)) static void name(int n)                                          \
	{                                                                                          \
		for (int i = 0; i < n; i++) {                                                      \
			sink = call;                                                               \
			free(sink);                                                                \
		}                                                                                  \
		__asm__ volatile("" ::: "memory");                                                 \
	}
SITE(site_main, malloc(10))
SITE(site_b, calloc(1, 1000))
SITE(site_shared, malloc(8))
SITE(site_gone, malloc(16))
SITE(site_new, malloc(32))

__attribute__((noinline)) static void site_a(int n)
{
	for (int i = 0; i < n; i++)
		alloc_inl(100);
	__asm__ volatile("" ::: "memory");
}

static int site_a_calls;

static void *worker_a(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker_a");
	site_a(site_a_calls);
	site_shared(50);
	return NULL;
}

static void *worker_b(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker_b");
	site_b(300);
	site_shared(50);
	return NULL;
}

int main(int argc, char **argv)
{
	int is_new = argc > 1 && !strcmp(argv[1], "new");
	if (argc < 2 || (!is_new && strcmp(argv[1], "base")))
		return 2;
	site_a_calls = is_new ? 250 : 200;
	site_main(100);
	if (is_new)
		site_new(70);
	else
		site_gone(40);
	pthread_t t;
	if (pthread_create(&t, NULL, worker_a, NULL) || pthread_join(t, NULL))
		return 3;
	if (pthread_create(&t, NULL, worker_b, NULL) || pthread_join(t, NULL))
		return 3;
	return 0;
}
