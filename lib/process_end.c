/* A process record's end as its parent writes it: the library's wait wrappers for a profiled
 * parent's child, and the launcher for the program it started. Only system calls (no malloc,
 * no stdio): safe inside malloc, and shared by both. */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "process_end.h"

uint64_t mf_process_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int mf_process_peek(int fd, struct mf_process_record *r, uint64_t pid)
{
	size_t head = offsetof(struct mf_process_record, counters);
	return pread(fd, r, head, 0) == (ssize_t)head &&
	       !memcmp(r->magic, MF_PROCESS_MAGIC, sizeof(r->magic)) &&
	       r->version == MF_FORMAT_VERSION && r->byte_order == MF_BYTE_ORDER_MARK &&
	       r->pid == pid;
}

void mf_process_poke_end(int fd, const struct mf_process_record *r)
{
	const size_t from = offsetof(struct mf_process_record, state),
		     to = offsetof(struct mf_process_record, pid);
	/* (a failure leaves the record running: the reader says it ended unrecorded) */
	if (pwrite(fd, (const char *)r + from, to - from, (off_t)from) == (ssize_t)(to - from))
		(void)!pwrite(fd, &r->end_ns, sizeof(r->end_ns),
			      offsetof(struct mf_process_record, end_ns));
}

size_t mf_process_dir_path(char *path, size_t size, const char *dir, pid_t pid, unsigned n)
{
	int len = n ? mf_format(path, size, "%s/malloc_freq.%d.%u", dir, (int)pid, n)
		    : mf_format(path, size, "%s/malloc_freq.%d", dir, (int)pid);
	return (size_t)len < size ? (size_t)len : size - 1;
}

void mf_process_end_by_parent(const char *dir, pid_t pid, int wstatus)
{
	if (!WIFEXITED(wstatus) && !WIFSIGNALED(wstatus))
		return;
	char path[MF_PATH_LEN + 32];
	int last = -1;
	uint32_t kept = 0; /* (its record's MF_PROCESS_KEPT flags) */
	for (unsigned n = 0; n < MF_PROCESS_IMAGES_MAX; n++) {
		size_t at = mf_process_dir_path(path, sizeof(path) - 9, dir, pid, n);
		memcpy(path + at, "/process", 9);
		int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			break; /* directories are numbered without gaps, and each has its record */
		struct mf_process_record r;
		if (mf_process_peek(fd, &r, (uint64_t)pid) && r.ppid == (uint64_t)getpid() &&
		    r.state == MF_PROCESS_RUNNING) {
			if (last >= 0)
				close(last);
			last = fd;
			kept = r.flags & MF_PROCESS_KEPT;
		} else {
			close(fd);
		}
	}
	if (last < 0)
		return;
	int exited = WIFEXITED(wstatus);
	struct mf_process_record end = {
	    .state = exited ? MF_PROCESS_EXITED : MF_PROCESS_SIGNALED,
	    .status = exited ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus),
	    .flags = (!exited && WCOREDUMP(wstatus) ? MF_PROCESS_CORE : 0) | MF_PROCESS_STATUS |
		     MF_PROCESS_BY_PARENT | kept,
	    .end_ns = mf_process_now_ns(),
	};
	mf_process_poke_end(last, &end);
	close(last);
}
