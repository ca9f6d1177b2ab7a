/* libmalloc_freq_api: the API of include/malloc_freq.h as no-ops, for a program to link with
 * (-lmalloc_freq_api) so that it runs unchanged without the profiler. Preloaded,
 * libmalloc_freq.so defines the same functions and the dynamic linker calls those instead.
 * The static library (MF_API_STATIC) is linked into the program, whose own definitions come
 * first in the lookup order: it looks the profiler's up and calls them. Never does anything
 * else: no state, no output. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "malloc_freq.h"

#ifdef MF_API_STATIC
#include <dlfcn.h>

/* The profiler's function name, looked up once among the objects loaded after the one holding
 * this code (the preloaded profiler comes after the program), or NULL. errno is kept (libc may
 * allocate its error message once, when the profiler is not loaded). */
static void *mf_api_find(void **slot, const char *name)
{
	static const char none;
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!f) {
		int saved = errno;
		f = dlsym(RTLD_NEXT, name);
		errno = saved;
		if (!f)
			f = (void *)&none;
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f == (void *)&none ? NULL : f;
}
/* The profiler's version of the function, called with args (and its value returned) if the
 * profiler is loaded. */
#define MF_API_FORWARD(name, args)                                                                 \
	do {                                                                                       \
		static void *slot_;                                                                \
		__typeof__(&name) f_ = (__typeof__(&name))mf_api_find(&slot_, #name);              \
		if (f_)                                                                            \
			return f_ args;                                                            \
	} while (0)
#define MF_API_FORWARD_VOID(name, args)                                                            \
	do {                                                                                       \
		static void *slot_;                                                                \
		__typeof__(&name) f_ = (__typeof__(&name))mf_api_find(&slot_, #name);              \
		if (f_) {                                                                          \
			f_ args;                                                                   \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#else
#define MF_API_FORWARD(name, args)	((void)0)
#define MF_API_FORWARD_VOID(name, args) ((void)0)
#endif

const char *malloc_freq_dir(void)
{
	MF_API_FORWARD(malloc_freq_dir, ());
	return NULL;
}

void malloc_freq_enable(void)
{
	MF_API_FORWARD_VOID(malloc_freq_enable, ());
}

void malloc_freq_disable(void)
{
	MF_API_FORWARD_VOID(malloc_freq_disable, ());
}

void malloc_freq_thread_enable(void)
{
	MF_API_FORWARD_VOID(malloc_freq_thread_enable, ());
}

void malloc_freq_thread_disable(void)
{
	MF_API_FORWARD_VOID(malloc_freq_thread_disable, ());
}

int malloc_freq_stats(struct malloc_freq_stats *s)
{
	MF_API_FORWARD(malloc_freq_stats, (s));
	if (!s) {
		errno = EINVAL;
		return -1;
	}
	memset(s, 0, sizeof(*s));
	errno = ENOSYS;
	return -1;
}

int malloc_freq_snapshot(const char *label)
{
	MF_API_FORWARD(malloc_freq_snapshot, (label));
	(void)label;
	errno = ENOSYS;
	return -1;
}

int malloc_freq_reset(void)
{
	MF_API_FORWARD(malloc_freq_reset, ());
	errno = ENOSYS;
	return -1;
}

void malloc_freq_tag_push(const char *name)
{
	MF_API_FORWARD_VOID(malloc_freq_tag_push, (name));
	(void)name;
}

void malloc_freq_tag_pop(void)
{
	MF_API_FORWARD_VOID(malloc_freq_tag_pop, ());
}
