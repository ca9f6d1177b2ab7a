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

/* The API's functions, in the order of mf_api_names. */
#define MF_API_FUNCTIONS(X)                                                                        \
	X(malloc_freq_dir)                                                                         \
	X(malloc_freq_enable)                                                                      \
	X(malloc_freq_disable)                                                                     \
	X(malloc_freq_thread_enable)                                                               \
	X(malloc_freq_thread_disable)                                                              \
	X(malloc_freq_stats)                                                                       \
	X(malloc_freq_snapshot)                                                                    \
	X(malloc_freq_reset)                                                                       \
	X(malloc_freq_tag_push)                                                                    \
	X(malloc_freq_tag_pop)
#define MF_API_ENUM(name) MF_API_##name,
enum { MF_API_FUNCTIONS(MF_API_ENUM) MF_API_COUNT };
#define MF_API_NAME(name) #name,
static const char *const mf_api_names[] = {MF_API_FUNCTIONS(MF_API_NAME)};

/* The profiler's functions, looked up among the objects loaded after the one holding this code
 * (the preloaded profiler comes after the program), NULL where it is not loaded: at start, in a
 * constructor. Not at a call: a lookup that fails makes libc allocate its error message, and
 * a call may come from a signal handler that interrupted the program's malloc. */
static void *mf_api_fns[MF_API_COUNT];
static int mf_api_found;

__attribute__((constructor)) static void mf_api_find(void)
{
	int saved = errno;
	for (int i = 0; i < MF_API_COUNT; i++)
		mf_api_fns[i] = dlsym(RTLD_NEXT, mf_api_names[i]);
	errno = saved;
	__atomic_store_n(&mf_api_found, 1, __ATOMIC_RELEASE);
}

/* The profiler's function: the constructor's answer (or, for a call from a constructor that
 * ran before it, the lookup now). */
static void *mf_api_fn(int i)
{
	if (!__atomic_load_n(&mf_api_found, __ATOMIC_ACQUIRE))
		mf_api_find();
	return mf_api_fns[i];
}
/* The profiler's version of the function, called with args (and its value returned) if the
 * profiler is loaded. */
#define MF_API_FORWARD(name, args)                                                                 \
	do {                                                                                       \
		__typeof__(&name) f_ = (__typeof__(&name))mf_api_fn(MF_API_##name);                \
		if (f_)                                                                            \
			return f_ args;                                                            \
	} while (0)
#define MF_API_FORWARD_VOID(name, args)                                                            \
	do {                                                                                       \
		__typeof__(&name) f_ = (__typeof__(&name))mf_api_fn(MF_API_##name);                \
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
