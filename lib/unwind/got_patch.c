/* What libunwind calls for its validation pipe, for the signal mask and to find the loaded
 * objects, redirected in its own GOT (nobody else's) to the functions here. Runs inside malloc:
 * no malloc, no stdio.
 *
 * libunwind (1.3 to 1.8, as Debian builds it) validates memory by writing it to a pipe it
 * opens in the process, and when that pipe's descriptors look closed it closes them again and
 * reopens: in a program that closed its descriptors and reused the numbers, that closes the
 * program's files. So before libunwind starts, its calls to make, read, write and close the
 * pipe point here (mf_unw_hooks): no pipe is made, and the check "is this address readable"
 * is done with process_vm_readv, which needs no descriptor.
 *
 * libunwind blocks every signal around each of its locks (its global cache, which Debian's
 * build keeps whatever the caching policy says; its memory pools; its walk over the loaded
 * objects): eight system calls per step. The blocking is needed, since a program's signal
 * handler may use libunwind too and would wait for ever on a lock its thread holds; but the
 * profiler calls libunwind only under its fork lock, with every signal blocked already (once
 * per slow step), so libunwind's own sigprocmask calls in that thread do nothing.
 *
 * libunwind finds the object of each frame with dl_iterate_phdr, which shows its caller only
 * the objects of the caller's namespace: it is shown every namespace's, so that it steps the
 * frames of code loaded with dlmopen too. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fork.h"
#include "thread.h"
#include "unwind/internal.h"

/* The two ends of libunwind's validation "pipe": numbers no descriptor can have. */
#define MF_FAKE_READ_FD	 (-1000)
#define MF_FAKE_WRITE_FD (-1001)

static int mf_unw_pipe2(int fds[2], int flags)
{
	(void)flags;
	fds[0] = MF_FAKE_READ_FD;
	fds[1] = MF_FAKE_WRITE_FD;
	return 0;
}

static int mf_unw_pipe(int fds[2])
{
	return mf_unw_pipe2(fds, 0);
}

static ssize_t mf_unw_read(int fd, void *buf, size_t n)
{
	if (fd == MF_FAKE_READ_FD) {
		errno = EAGAIN; /* "the pipe is empty": it stays open */
		return -1;
	}
	return read(fd, buf, n);
}

static int mf_unw_close(int fd)
{
	if (fd == MF_FAKE_READ_FD || fd == MF_FAKE_WRITE_FD)
		return 0;
	return close(fd);
}

/* Writing one byte of addr to the pipe is libunwind's test that addr is readable: ask the
 * kernel to copy it instead, which fails with EFAULT where the write would have. (From this
 * thread by its own id: once the main thread has exited, the process's id names a zombie
 * that has no memory left to read.) Where a seccomp filter forbids process_vm_readv, the kernel
 * reads the address as a signal set to block instead: every signal is blocked already while
 * the profiler unwinds (and the mask is put back after), so that changes nothing but fails
 * with EFAULT the same way. */
static int mf_unw_no_vm_readv;

static long mf_unw_readable(const void *addr)
{
	char byte;
	struct iovec local = {&byte, 1}, remote = {(void *)addr, 1};
	if (!mf_unw_no_vm_readv) {
		if (process_vm_readv(gettid(), &local, 1, &remote, 1, 0) == 1)
			return 1;
		if (errno == EFAULT)
			return -1;
		mf_unw_no_vm_readv = 1; /* (EPERM or ENOSYS: not the address's fault) */
	}
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, addr, NULL, 8) == 0)
		return 1;
	errno = EFAULT;
	return -1;
}

static ssize_t mf_unw_write(int fd, const void *buf, size_t n)
{
	if (fd == MF_FAKE_WRITE_FD)
		return mf_unw_readable(buf);
	return write(fd, buf, n);
}

/* libunwind may write through syscall() to keep sanitizers quiet. */
static long mf_unw_syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_write && (int)a[0] == MF_FAKE_WRITE_FD) /* an int: only its low half is set */
		return mf_unw_readable((const void *)a[1]);
	return syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* While the fork lock is held (every libunwind call is made under it) every signal is blocked
 * already: libunwind restores what it is given here, which does nothing either. */
static int mf_unw_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (mf_tls.fork_held) {
		if (old)
			sigfillset(old);
		return 0;
	}
	return sigprocmask(how, set, old);
}

static int mf_unw_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return mf_tls.fork_held ? mf_unw_sigprocmask(how, set, old)
				: pthread_sigmask(how, set, old);
}

static int mf_unw_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	return mf_objects_each(cb, arg);
}

/* What libunwind does with its pipe, each by one call or another: made (pipe2, or pipe
 * where it was built without), read, closed, written (by syscall from 1.3 on, where it takes
 * it: x86-64's does, AArch64's does not; by write where built without <sys/syscall.h>;
 * Debian's 1.6 imports both). Each it imports must be ours, or none of them: its pipe is made
 * real again. The signal mask's and the loaded objects' are what libunwind happens to call. */
enum { MF_UNW_MAKE = 1, MF_UNW_READ = 2, MF_UNW_CLOSE = 4, MF_UNW_WRITE = 8, MF_UNW_ALL = 15 };

static const struct {
	const char *name;
	void *fn;
	int does;
} mf_unw_hooks[] = {
    {"pipe2", (void *)mf_unw_pipe2, MF_UNW_MAKE},
    {"pipe", (void *)mf_unw_pipe, MF_UNW_MAKE},
    {"read", (void *)mf_unw_read, MF_UNW_READ},
    {"close", (void *)mf_unw_close, MF_UNW_CLOSE},
    {"write", (void *)mf_unw_write, MF_UNW_WRITE},
    {"syscall", (void *)mf_unw_syscall, MF_UNW_WRITE},
    {"sigprocmask", (void *)mf_unw_sigprocmask, 0},
    {"pthread_sigmask", (void *)mf_unw_pthread_sigmask, 0},
    {"dl_iterate_phdr", (void *)mf_unw_dl_iterate_phdr, 0},
};

struct mf_patch {
	int found; /* libunwind's objects seen (libunwind.so, libunwind-x86_64.so) */
	struct mf_got_object object[2];
	int now;    /* the one whose slots are being patched */
	int does;   /* MF_UNW_*: what of the pipe's use was redirected */
	int failed; /* a slot could not be written */
	/* The slots that make the pipe, whose object, and what they held: put back if the rest
	 * is not ours. */
	void **make[4];
	void *made_by[4];
	int make_in[4];
	int makes;
};

/* A slot of libunwind's for one of the calls above: pointed at ours. */
static int mf_patch_slot(void **slot, const char *name, const ElfW(Sym) * sym, unsigned type,
			 void *arg)
{
	(void)sym, (void)type;
	struct mf_patch *p = arg;
	for (size_t h = 0; h < sizeof(mf_unw_hooks) / sizeof(mf_unw_hooks[0]); h++) {
		if (strcmp(name, mf_unw_hooks[h].name))
			continue;
		void *was = *slot;
		if (mf_got_write(&p->object[p->now], slot, mf_unw_hooks[h].fn)) {
			p->failed = 1;
			continue;
		}
		p->does |= mf_unw_hooks[h].does;
		if (mf_unw_hooks[h].does == MF_UNW_MAKE &&
		    p->makes < (int)(sizeof(p->make) / sizeof(p->make[0]))) {
			p->make[p->makes] = slot;
			p->made_by[p->makes] = was;
			p->make_in[p->makes++] = p->now;
		}
	}
	return 0;
}

static int mf_patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_patch *p = arg;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libunwind.so", 12) &&
	    strncmp(base, MF_ARCH_LIBUNWIND_SO, strlen(MF_ARCH_LIBUNWIND_SO)))
		return 0;
	/* (the writes are made outside the loader's lock: they take the fork lock) */
	if (mf_got_object(info, &p->object[p->found]))
		p->failed = 1;
	return ++p->found == 2;
}

void mf_got_patch_libunwind(void)
{
	struct mf_patch p = {0};
	mf_objects_iterate(mf_patch_object, &p);
	for (; !p.failed && p.now < p.found; p.now++)
		if (mf_got_each(&p.object[p.now], mf_patch_slot, &p))
			p.failed = 1;
	if (p.found && !p.failed && p.does == MF_UNW_ALL)
		return;
	/* Descriptors of ours that libunwind would read or write by the real calls: it would take
	 * every address for unreadable. Its pipe is then its own again. */
	for (int i = 0; i < p.makes; i++)
		mf_got_write(&p.object[p.make_in[i]], p.make[i], p.made_by[i]);
	mf_log("cannot keep libunwind from opening a pipe in this process (%s); a program "
	       "that closes and reuses its descriptors may be disturbed",
	       !p.found	  ? "libunwind not found"
	       : p.failed ? "GOT not writable"
			  : "calls not found");
}
