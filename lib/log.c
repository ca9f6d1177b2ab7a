/* Diagnostics of libmalloc_freq: one-line messages on stderr (formatted by format.c).
 * Runs inside malloc: no malloc, no stdio, errno preserved. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mf_internal.h"

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
	static const char prefix[] = "malloc_freq: ";
	memcpy(line, prefix, sizeof(prefix) - 1);
	size_t at = sizeof(prefix) - 1;
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
