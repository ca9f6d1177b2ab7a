/* Diagnostics of libmalloc_freq: one-line messages on stderr (formatted by format.c), only
 * while descriptor 2 is the file it was at start, and never with a SIGPIPE to the program.
 * Runs inside malloc: no malloc, no stdio, errno preserved. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
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

/* Descriptor 2 at start: a program that closes it and opens a file of its own there must not
 * find our lines in that file. (0: not looked at yet; -1: there was none.) */
static int mf_log_known;
static dev_t mf_log_dev;
static ino_t mf_log_ino;

void mf_log_init(void)
{
	int saved = errno;
	struct stat st;
	int ok = fstat(STDERR_FILENO, &st) == 0;
	if (ok) {
		mf_log_dev = st.st_dev;
		mf_log_ino = st.st_ino;
	}
	__atomic_store_n(&mf_log_known, ok ? 1 : -1, __ATOMIC_RELEASE);
	errno = saved;
}

/* Is descriptor 2 still the stderr the program started with? */
static int mf_log_same(void)
{
	if (!__atomic_load_n(&mf_log_known, __ATOMIC_ACQUIRE))
		mf_log_init();
	struct stat st;
	return mf_log_known > 0 && fstat(STDERR_FILENO, &st) == 0 && st.st_dev == mf_log_dev &&
	       st.st_ino == mf_log_ino;
}

/* Writes line[0..len) to stderr with SIGPIPE blocked: a reader that has gone must not end the
 * program (the program itself may never write there). A SIGPIPE the write raised is taken
 * back, unless one was pending already. */
static void mf_log_write(const char *line, size_t len)
{
	uint64_t pipe = 1ull << (SIGPIPE - 1), old;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &pipe, &old, 8);
	sigset_t was;
	int pending = sigpending(&was) == 0 && sigismember(&was, SIGPIPE);
	int epipe = mf_write_all(STDERR_FILENO, line, len) == -EPIPE;
	if (epipe && !pending) {
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, SIGPIPE);
		struct timespec none = {0, 0};
		while (sigtimedwait(&one, NULL, &none) < 0 && errno == EINTR)
			;
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
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
	if (mf_log_same() && !mf_log_too_far(STDERR_FILENO, at))
		mf_log_write(line, at);
	errno = saved;
}
