/* format.c: snprintf for %s %d %u %lu %lx %zu only, which never allocates. */
#ifndef MF_FORMAT_H
#define MF_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

/* Formats into buf (size bytes, always ended); returns the length it would have, or -1 for
 * a conversion it does not know. */
int mf_format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int mf_vformat(char *buf, size_t size, const char *fmt, va_list ap);

#endif
