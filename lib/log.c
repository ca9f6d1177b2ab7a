/* Diagnostics of libmalloc_freq: a tiny formatter and one-line messages on stderr.
 * Runs inside malloc: no malloc, no stdio, errno preserved. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mf_internal.h"

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

static int mf_vformat(char *buf, size_t size, const char *fmt, va_list ap)
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

/* Would writing len bytes to fd go past RLIMIT_FSIZE? (The kernel's answer would be SIGXFSZ,
 * which kills the program: a regular file at stderr, and a lowered limit.) */
static int mf_log_too_far(int fd, size_t len)
{
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	int flags = fcntl(fd, F_GETFL);
	off_t at = flags >= 0 && (flags & O_APPEND) ? st.st_size : lseek(fd, 0, SEEK_CUR);
	return at >= 0 && mf_prof_size_allowed(at + (off_t)len) != 0;
}

void mf_log(const char *fmt, ...)
{
	char line[1024];
	int saved = errno;
	size_t at = mf_put(line, sizeof(line), 0, "malloc_freq: ", 13);
	va_list ap;
	va_start(ap, fmt);
	int n = mf_vformat(line + at, sizeof(line) - at - 1, fmt, ap);
	va_end(ap);
	at += n < 0 ? 0 : (size_t)n;
	if (at > sizeof(line) - 2)
		at = sizeof(line) - 2;
	line[at++] = '\n';
	for (size_t off = mf_log_too_far(STDERR_FILENO, at) ? at : 0; off < at;) {
		ssize_t w = write(STDERR_FILENO, line + off, at - off);
		if (w <= 0 && errno != EINTR)
			break;
		if (w > 0)
			off += (size_t)w;
	}
	errno = saved;
}
