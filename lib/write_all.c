/* Writing a buffer to a descriptor whole: the one loop for every file lib/ writes with write(2)
 * (the process record, snapshots, the rule cache, lines on stderr). Async-signal-safe; no
 * malloc, no stdio. */
#include "config.h"

#include <errno.h>
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
