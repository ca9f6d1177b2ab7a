/* Preloaded before the profiler by t_pack: steps of packing an ended thread's file fail on
 * demand, as a full or network disk makes them fail. Each variable counts the calls of its kind
 * from 1 and fails the one it names:
 *   MF_TEST_FAIL_WRITE=K     the K-th pwrite to ended.pack writes half its bytes (a short write)
 *   MF_TEST_FAIL_CLOSE=K     the K-th close of ended.pack fails with EIO (as NFS says ENOSPC)
 *   MF_TEST_FAIL_UNLINK=K    the K-th unlinkat of a .prof file fails with EBUSY
 *   MF_TEST_FAIL_GONE=K      the K-th unlinkat of a .prof file removes it, then fails with EIO
 *                            (as a network file system whose server removed it)
 *   MF_TEST_FAIL_TRUNCATE=1  every ftruncate of ended.pack fails with EIO
 * Calls made by the profiler's descriptor task too: no malloc, no stdio. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long mf_fail_write, mf_fail_close, mf_fail_unlink, mf_fail_gone, mf_fail_truncate;
static long mf_writes, mf_closes, mf_unlinks;

__attribute__((constructor)) static void mf_fail_init(void)
{
	const char *s;
	if ((s = getenv("MF_TEST_FAIL_WRITE")))
		mf_fail_write = atol(s);
	if ((s = getenv("MF_TEST_FAIL_CLOSE")))
		mf_fail_close = atol(s);
	if ((s = getenv("MF_TEST_FAIL_UNLINK")))
		mf_fail_unlink = atol(s);
	if ((s = getenv("MF_TEST_FAIL_GONE")))
		mf_fail_gone = atol(s);
	if ((s = getenv("MF_TEST_FAIL_TRUNCATE")))
		mf_fail_truncate = atol(s);
}

/* Whether descriptor fd (of the calling task's table) is a pack's. */
static int mf_is_pack(int fd)
{
	char link[64], path[4096];
	const char *digits = "0123456789";
	int n = 0;
	char num[16];
	do
		num[n++] = digits[fd % 10];
	while ((fd /= 10) && n < 15);
	memcpy(link, "/proc/thread-self/fd/", 21);
	for (int i = 0; i < n; i++)
		link[21 + i] = num[n - 1 - i];
	link[21 + n] = 0;
	long len = syscall(SYS_readlinkat, -100 /* AT_FDCWD */, link, path, sizeof(path) - 1);
	if (len < 11)
		return 0;
	path[len] = 0;
	return !strcmp(path + len - 11, "/ended.pack");
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t at)
{
	if (mf_fail_write && mf_is_pack(fd) &&
	    __atomic_add_fetch(&mf_writes, 1, __ATOMIC_SEQ_CST) == mf_fail_write)
		len /= 2;
	return syscall(SYS_pwrite64, fd, buf, len, at);
}
ssize_t pwrite64(int fd, const void *buf, size_t len, off_t at) __attribute__((alias("pwrite")));

int close(int fd)
{
	int fail = mf_fail_close && mf_is_pack(fd) &&
		   __atomic_add_fetch(&mf_closes, 1, __ATOMIC_SEQ_CST) == mf_fail_close;
	long r = syscall(SYS_close, fd);
	if (fail && !r) {
		errno = EIO;
		return -1;
	}
	return (int)r;
}

int unlinkat(int dir, const char *name, int flags)
{
	size_t len = strlen(name);
	long k = (mf_fail_unlink || mf_fail_gone) && len > 5 && !strcmp(name + len - 5, ".prof")
		     ? __atomic_add_fetch(&mf_unlinks, 1, __ATOMIC_SEQ_CST)
		     : 0;
	if (k && k == mf_fail_unlink) {
		errno = EBUSY;
		return -1;
	}
	long r = syscall(SYS_unlinkat, dir, name, flags);
	if (k && k == mf_fail_gone && !r) {
		errno = EIO;
		return -1;
	}
	return (int)r;
}

int ftruncate(int fd, off_t len)
{
	if (mf_fail_truncate && mf_is_pack(fd)) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_ftruncate, fd, len);
}
int ftruncate64(int fd, off_t len) __attribute__((alias("ftruncate")));
