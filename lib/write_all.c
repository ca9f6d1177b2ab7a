/* Buffers to and from files whole: the one loop for every file lib/ writes with write(2)
 * (the process record, snapshots, the rule cache, lines on stderr), and the one read of a
 * small file's first bytes (/proc files, the program's ELF magic). Async-signal-safe; no
 * malloc, no stdio. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "mf_internal.h"

int mf_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

ssize_t mf_read_head(const char *path, char *buf, size_t size, int *more)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	ssize_t n = 0;
	while (len < size && (n = read(fd, buf + len, size - len)) > 0)
		len += (size_t)n;
	char extra;
	if (more)
		*more = len == size && read(fd, &extra, 1) == 1;
	close(fd);
	return len || n == 0 ? (ssize_t)len : -1;
}
