/* A tiny formatter, as snprintf for the few conversions the library needs: never allocates,
 * never touches stdio or errno, so it runs inside malloc (log.c's messages, file and
 * directory names) and in the launcher alike. */
#include "config.h"

#include <string.h>

#include "format.h"

static size_t mf_put(char *buf, size_t size, size_t at, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, at++)
		if (at + 1 < size)
			buf[at] = s[i];
	return at;
}

static size_t mf_put_num(char *buf, size_t size, size_t at, unsigned long v, unsigned base, int neg)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		tmp[n++] = '-';
	while (n)
		at = mf_put(buf, size, at, &tmp[--n], 1);
	return at;
}

int mf_vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t at = 0;
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			at = mf_put(buf, size, at, p, 1);
			continue;
		}
		p++;
		int is_long = 0;
		while (*p == 'l' || *p == 'z') {
			is_long = 1;
			p++;
		}
		switch (*p) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			at = mf_put(buf, size, at, s, strlen(s));
			break;
		}
		case 'd': {
			long v = is_long ? va_arg(ap, long) : va_arg(ap, int);
			at = mf_put_num(buf, size, at, v < 0 ? -(unsigned long)v : (unsigned long)v,
					10, v < 0);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long v =
			    is_long ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			at = mf_put_num(buf, size, at, v, *p == 'x' ? 16 : 10, 0);
			break;
		}
		case '%':
			at = mf_put(buf, size, at, "%", 1);
			break;
		default:
			return -1; /* a format this formatter does not know: a bug, caught by tests
				    */
		}
	}
	if (size)
		buf[at < size ? at : size - 1] = 0;
	return (int)at;
}

int mf_format(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = mf_vformat(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
