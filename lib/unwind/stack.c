/* The bounds of the mapping that holds a stack pointer, from /proc/self/maps: what the walk
 * may read when it steps a frame by a guess (code no unwind table covers). Read once per
 * thread that meets such code on its own stack, on the slow path; once per walk on another
 * stack. No malloc; a small buffer on the stack. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "unwind/internal.h"

/* The hex number at *p, moving *p past it. */
static uintptr_t mf_stack_hex(const char **p, const char *end)
{
	uintptr_t v = 0;
	for (; *p < end; (*p)++) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			break;
		v = v << 4 | (uintptr_t)d;
	}
	return v;
}

/* Does the line at p ("start-end perms ...") hold sp? Then its range goes to lo, hi. */
static int mf_stack_line(const char *p, const char *end, uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t start = mf_stack_hex(&p, end);
	if (p == end || *p++ != '-')
		return 0;
	uintptr_t stop = mf_stack_hex(&p, end);
	if (sp < start || sp >= stop)
		return 0;
	*lo = start;
	*hi = stop;
	return 1;
}

struct mf_stack_call {
	uintptr_t sp, *lo, *hi;
};

static long mf_stack_bounds_apart(void *arg)
{
	const struct mf_stack_call *c = arg;
	uintptr_t sp = c->sp, *lo = c->lo, *hi = c->hi;
	int saved = errno, found = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errno = saved;
		return -1;
	}
	char buf[512];
	size_t have = 0;
	int eof = 0, skip = 0; /* skip: the rest of a line longer than buf */
	while (!found && !eof) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		eof = n <= 0;
		have += n > 0 ? (size_t)n : 0;
		const char *p = buf, *end = buf + have, *nl = buf;
		while (!found && p < end) {
			for (nl = p; nl < end && *nl != '\n'; nl++)
				;
			if (nl == end && !eof)
				break; /* a line cut by the buffer: read on */
			found = !skip && mf_stack_line(p, nl, sp, lo, hi);
			skip = 0;
			p = nl + (nl < end);
		}
		/* The cut line is kept; of one longer than the buffer (a long path) the range is
		 * read now, with its start, and the rest skipped. */
		size_t keep = (size_t)(end - p);
		if (!found && keep == sizeof(buf)) {
			found = !skip && mf_stack_line(p, end, sp, lo, hi);
			keep = 0;
			skip = 1;
		}
		for (size_t i = 0; i < keep; i++)
			buf[i] = p[i];
		have = keep;
	}
	close(fd);
	errno = saved;
	return found ? 0 : -1;
}

int mf_stack_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	struct mf_stack_call c = {sp, lo, hi};
	return (int)mf_fds_apart(mf_stack_bounds_apart, &c);
}

/* (ld.so's: where the main thread's stack began) */
extern void *__libc_stack_end;

int mf_stack_own(uintptr_t lo, uintptr_t hi)
{
	/* glibc maps a thread's descriptor, where the thread pointer points, with its stack; the
	 * main thread's descriptor lies elsewhere, but its stack holds __libc_stack_end */
	uintptr_t tp = (uintptr_t)__builtin_thread_pointer(), start = (uintptr_t)__libc_stack_end;
	return (lo <= tp && tp < hi) || (lo <= start && start < hi);
}
