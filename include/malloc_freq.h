/* malloc_freq: the API a program may call while it runs under libmalloc_freq.so.
 * The library is meant to be preloaded, so declare what you use weak and test for it:
 *     #pragma weak malloc_freq_dir
 *     if (malloc_freq_dir) printf("profile: %s\n", malloc_freq_dir());
 */
#ifndef MALLOC_FREQ_H
#define MALLOC_FREQ_H

#ifdef __cplusplus
extern "C" {
#endif

/* The absolute path of this process's profile directory, malloc_freq.<pid>[.<n>]; NULL before
 * the first recorded allocation or when recording is off. Thread-safe; the string stays valid
 * until the process forks (a child gets its own directory). */
const char *malloc_freq_dir(void);

#ifdef __cplusplus
}
#endif

#endif
