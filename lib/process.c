/* The process record `process` of the profile directory (malloc_freq_format.h): made with the
 * directory, mapped shared so that a SIGKILL loses nothing, and given the process's end at
 * exit, _exit and _Exit; a parent's wait gives its children theirs, and a new image marks the
 * one it replaced. Runs inside malloc, in _exit and in wait, which a signal handler may call:
 * no malloc, no stdio, errno preserved, async-signal-safe (the one lock, fds_apart.c's, is
 * taken with signals blocked); files opened in a table of their own, no descriptor kept. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"
#include "process_end.h"

struct mf_process_real mf_process_real;

static struct mf_process_record *mf_proc;    /* this process's record, mapped */
static pid_t mf_proc_pid;		     /* the process mf_proc belongs to */
static struct mf_process_record mf_proc_new; /* a record being made (under the dir lock) */
static int mf_process_argc;		     /* the program's arguments, from the loader */
static char **mf_process_argv;
/* In a forked child, the process that forked it (0: not known): the parent its record names,
 * which getppid() no longer says once that parent has ended (the record is made at the
 * child's first allocation, which may come later). mf_proc_forker: this process, while it
 * forks with fork()'s handlers. */
static pid_t mf_proc_parent, mf_proc_forker;
/* When the library was loaded into this image: a forked child keeps it, as the image that
 * forked it, and its record names its parent's image by it. */
static uint64_t mf_process_image_ns;

/* The arguments the loader gave the constructor, as /proc/self/cmdline has them (each ending
 * in NUL) but without the system calls: how many bytes of buf (size) they fill. */
static ssize_t mf_process_args(char *buf, size_t size, int *more)
{
	size_t len = 0;
	for (int i = 0; i < mf_process_argc && mf_process_argv[i]; i++) {
		size_t n = strlen(mf_process_argv[i]) + 1;
		if (len + n > size) {
			memcpy(buf + len, mf_process_argv[i], size - len);
			*more = 1;
			return (ssize_t)size;
		}
		memcpy(buf + len, mf_process_argv[i], n);
		len += n;
	}
	return (ssize_t)len;
}

/* Field 22 of the process's stat: the start time, after the command name (which may hold
 * spaces and parentheses: the last ')' ends it). 0 if it cannot be read. Read from its main
 * thread's stat, the same number: qemu-user answers /proc/self/stat itself, with the time its
 * emulation started, which matches neither the kernel's /proc/PID/stat, that mf_print reads,
 * nor what the image an exec brings (a new emulation) reads. (/proc/self/stat where the
 * main thread is not found there: a /proc of another pid namespace.) */
static uint64_t mf_process_start_ticks(pid_t pid)
{
	char path[64], buf[1024];
	mf_format(path, sizeof(path), "/proc/self/task/%d/stat", (int)pid);
	ssize_t n = mf_read_head(path, buf, sizeof(buf) - 1, NULL);
	if (n <= 0)
		n = mf_read_head("/proc/self/stat", buf, sizeof(buf) - 1, NULL);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (int field = 2; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/* Whether the program is Go's: its executable has a note of owner "Go" (its build id). Go's
 * runtime ends the process with exit_group itself, past exit() and _exit(). Read from the
 * program headers the kernel gave (no loader lock, no file). */
static int mf_process_is_go(void)
{
	const ElfW(Phdr) *ph = (const void *)getauxval(AT_PHDR);
	size_t n = getauxval(AT_PHNUM);
	uintptr_t bias = 0; /* (an executable without PT_PHDR is not position-independent) */
	for (size_t i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			bias = (uintptr_t)ph - ph[i].p_vaddr;
	for (size_t i = 0; ph && i < n; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		size_t align = ph[i].p_align == 8 ? 8 : 4;
		const char *p = (const char *)(bias + ph[i].p_vaddr), *end = p + ph[i].p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *note = (const void *)p;
			const char *name = p + sizeof(*note);
			size_t name_len = (note->n_namesz + align - 1) & ~(align - 1);
			size_t desc_len = (note->n_descsz + align - 1) & ~(align - 1);
			if ((size_t)(end - name) < name_len)
				break;
			if ((note->n_namesz == 3 || note->n_namesz == 4) && !memcmp(name, "Go", 3))
				return 1;
			if ((size_t)(end - name) - name_len < desc_len)
				break;
			p = name + name_len + desc_len;
		}
	}
	return 0;
}

/* The image this one replaced by exec: the latest directory of this pid before dir n whose
 * record has this process's start time and no end. It is marked replaced, and named in r. */
static void mf_process_find_exec(struct mf_process_record *r, pid_t pid, unsigned n)
{
	char path[MF_PATH_LEN];
	for (unsigned k = n; k-- > 0;) {
		size_t dir_len = mf_process_dir_path(path, sizeof(path) - 9, mf_config.dir, pid, k);
		memcpy(path + dir_len, "/process", 9);
		int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct mf_process_record old;
		if (mf_process_peek(fd, &old, (uint64_t)pid) && old.start_ticks == r->start_ticks &&
		    old.state == MF_PROCESS_RUNNING) {
			old.state = MF_PROCESS_EXECED;
			old.flags &= ~MF_PROCESS_STATUS;
			/* (the same process: its parent may have ended since) */
			r->ppid = old.ppid;
			old.end_ns = mf_process_now_ns();
			mf_process_poke_end(fd, &old);
			path[dir_len] = 0;
			const char *name = strrchr(path, '/') + 1;
			mf_format(r->exec_from, sizeof(r->exec_from), "%s", name);
			k = 0;
		}
		close(fd);
	}
}

void mf_process_created(pid_t pid, unsigned n)
{
	struct mf_process_record *r = &mf_proc_new;
	if (getpid() != pid)
		return; /* a child forked by a signal handler, finishing its parent's step */
	memset(r, 0, sizeof(*r));
	memcpy(r->magic, MF_PROCESS_MAGIC, sizeof(r->magic));
	r->version = MF_FORMAT_VERSION;
	r->byte_order = MF_BYTE_ORDER_MARK;
	r->record_size = MF_PROCESS_SIZE;
	r->state = MF_PROCESS_RUNNING;
	r->pid = (uint64_t)pid;
	r->ppid = (uint64_t)(mf_proc_parent ? mf_proc_parent : getppid());
	r->start_ticks = mf_process_start_ticks(pid);
	r->start_ns = mf_process_now_ns();
	if (!mf_process_image_ns) /* (a call before the constructor's) */
		mf_process_image_ns = r->start_ns;
	r->image_ns = mf_process_image_ns;
	const char *exe = mf_modules_main_path(); /* (as found at start) */
	r->exe_len = (uint32_t)strnlen(exe, sizeof(r->exe) - 1);
	memcpy(r->exe, exe, r->exe_len);
	ssize_t len;
	int more = 0;
	if (mf_process_argv)
		len = mf_process_args(r->cmdline, sizeof(r->cmdline) - 1, &more);
	else
		len = mf_read_head("/proc/self/cmdline", r->cmdline, sizeof(r->cmdline) - 1, &more);
	if (len > 0 && r->cmdline[len - 1] != 0) /* cut inside an argument: end it there */
		r->cmdline[len++] = 0;
	r->cmdline_len = len > 0 ? (uint32_t)len : 0;
	for (uint32_t i = 0; i < r->cmdline_len; i++)
		r->argc += r->cmdline[i] == 0;
	r->flags =
	    (more ? MF_PROCESS_CMDLINE_CUT : 0) | (mf_process_is_go() ? MF_PROCESS_RAW_EXIT : 0);
	mf_process_find_exec(r, pid, n);

	/* Written whole (its blocks are then the file's: the mapping cannot fault on a full disk),
	 * then mapped. */
	if (mf_prof_size_allowed(MF_PROCESS_SIZE))
		return;
	int dfd = mf_prof_dir_open();
	if (dfd < 0)
		return;
	int fd = openat(dfd, "process", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			mf_config.file_mode);
	mf_prof_dir_close(dfd);
	if (fd < 0)
		return;
	void *p = mf_write_all(fd, r, sizeof(*r)) == 0
		      ? mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
		      : MAP_FAILED;
	close(fd);
	if (p == MAP_FAILED) {
		MF_LOG_ONCE("cannot write %s/process: %s; how the process ends is not recorded",
			    mf_prof_dir(), strerrordesc_np(errno));
		return;
	}
	mf_proc = p;
	__atomic_store_n(&mf_proc_pid, pid, __ATOMIC_RELEASE);
}

/* This process's record, or NULL (none made, or the one mapped is a parent's: a fork or
 * vfork child writes nothing there). */
static struct mf_process_record *mf_process_mine(void)
{
	pid_t owner = __atomic_load_n(&mf_proc_pid, __ATOMIC_ACQUIRE);
	return owner && owner == mf_confine_pid() ? mf_proc : NULL;
}

/* Writes this process's end, at ns; an end already written with a status is kept (unless this
 * one has one too). */
static void mf_process_end_at(int state, int status, uint32_t flags, uint64_t ns)
{
	struct mf_process_record *r = mf_process_mine();
	if (!r || (r->state != MF_PROCESS_RUNNING && (r->flags & MF_PROCESS_STATUS) &&
		   !(flags & MF_PROCESS_STATUS)))
		return;
	r->status = status;
	r->flags = (r->flags & MF_PROCESS_KEPT) | flags;
	r->end_ns = ns;
	__atomic_store_n(&r->state, (uint32_t)state, __ATOMIC_RELEASE);
}

/* ... now. Not from a thread in seccomp strict mode: its exit() and _exit() end in exit_group,
 * which the kernel answers by killing the thread (a parent's wait then tells how). */
static void mf_process_end(int state, int status, uint32_t flags)
{
	if (!mf_confined)
		mf_process_end_at(state, status, flags, mf_process_now_ns());
}

/* exit()'s status. The handler may run before or after the destructor (mf_process_exit):
 * registered at load, it comes after the loader's own, which runs the destructors. */
static void mf_process_on_exit(int status, void *arg)
{
	(void)arg;
	int saved = errno;
	mf_process_end(MF_PROCESS_EXITED, status, MF_PROCESS_STATUS);
	errno = saved;
}

void mf_process_init(int argc, char **argv, int record)
{
	if (!mf_process_image_ns)
		mf_process_image_ns = mf_process_now_ns();
	mf_process_argc = argc;
	mf_process_argv = argc > 0 ? argv : NULL;
	*(void **)&mf_process_real.exit = dlsym(RTLD_NEXT, "_exit");
	*(void **)&mf_process_real.wait = dlsym(RTLD_NEXT, "wait");
	*(void **)&mf_process_real.waitpid = dlsym(RTLD_NEXT, "waitpid");
	*(void **)&mf_process_real.wait3 = dlsym(RTLD_NEXT, "wait3");
	*(void **)&mf_process_real.wait4 = dlsym(RTLD_NEXT, "wait4");
	*(void **)&mf_process_real.waitid = dlsym(RTLD_NEXT, "waitid");
	if (record)
		on_exit(mf_process_on_exit, NULL);
}

void mf_process_exit(void)
{
	int saved = errno;
	mf_process_end(MF_PROCESS_EXITED, 0, 0);
	errno = saved;
}

void mf_process_quick_exit(int status)
{
	int saved = errno;
	mf_process_end(MF_PROCESS_QUICK_EXIT, status, MF_PROCESS_STATUS);
	errno = saved;
}

void mf_process_confined_exit(int status, uint64_t ns)
{
	mf_process_end_at(MF_PROCESS_QUICK_EXIT, status, MF_PROCESS_STATUS, ns);
}

void mf_process_unrecorded(size_t bytes)
{
	int saved = errno;
	struct mf_process_record *r = mf_process_mine();
	if (r) {
		uint64_t *b = &r->counters[MF_PROCESS_UNRECORDED_BYTES];
		uint64_t was = __atomic_load_n(b, __ATOMIC_RELAXED), now;
		do /* (saturating: a sum at 2^64 - 1 stays there) */
			now = was + bytes < was ? UINT64_MAX : was + bytes;
		while (!__atomic_compare_exchange_n(b, &was, now, 1, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED));
		__atomic_fetch_add(&r->counters[MF_PROCESS_UNRECORDED_CALLS], 1, __ATOMIC_RELAXED);
	}
	errno = saved;
}

void mf_process_count(enum mf_process_counter c, uint64_t n)
{
	int saved = errno;
	struct mf_process_record *r = mf_process_mine();
	if (r)
		__atomic_fetch_add(&r->counters[c], n, __ATOMIC_RELAXED);
	errno = saved;
}

void mf_process_set(enum mf_process_counter c, uint64_t v)
{
	struct mf_process_record *r = __atomic_load_n(&mf_proc, __ATOMIC_ACQUIRE);
	if (r)
		__atomic_store_n(&r->counters[c], v, __ATOMIC_RELAXED);
}

void mf_process_detach(void)
{
	struct mf_process_record *r = mf_process_mine();
	if (r && r->state == MF_PROCESS_RUNNING) {
		r->detached_ns = mf_process_now_ns();
		__atomic_or_fetch(&r->flags, MF_PROCESS_DETACHED, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&mf_proc_pid, 0, __ATOMIC_RELEASE);
}

void mf_process_prefork(void)
{
	mf_proc_forker = getpid();
}

void mf_process_forget(void)
{
	/* (the parent's record, else, without one, the parent's fork; a raw fork's child has
	 * only the first) */
	pid_t parent = __atomic_load_n(&mf_proc_pid, __ATOMIC_ACQUIRE);
	if (!parent)
		parent = mf_proc_forker;
	mf_proc_parent = parent != getpid() ? parent : 0;
	mf_proc_forker = 0;
	/* (replaced by private memory, not unmapped: a call of ours that a fork in a signal
	 * handler interrupted still writes through the pointer it had loaded, then into memory
	 * of the child's own, neither faulting nor touching the parent's record) */
	if (mf_proc && mmap(mf_proc, sizeof(*mf_proc), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		munmap(mf_proc, sizeof(*mf_proc));
	mf_proc = NULL;
	__atomic_store_n(&mf_proc_pid, 0, __ATOMIC_RELEASE);
}

struct mf_process_reap_call {
	pid_t pid;
	int status;
};

static long mf_process_reap_apart(void *arg)
{
	const struct mf_process_reap_call *c = arg;
	mf_process_end_by_parent(mf_config.dir, c->pid, c->status);
	return 0;
}

void mf_process_reaped(pid_t pid, int status)
{
	if (pid <= 0 || !mf_config.dir[0] || !(WIFEXITED(status) || WIFSIGNALED(status)))
		return;
	int saved = errno, cancel = mf_nocancel_begin();
	struct mf_process_reap_call c = {pid, status};
	mf_fds_apart(mf_process_reap_apart, &c);
	mf_nocancel_end(cancel);
	errno = saved;
}

void mf_process_reaped_info(const siginfo_t *info)
{
	if (!info || info->si_pid <= 0)
		return;
	int code = info->si_code;
	if (code == CLD_EXITED)
		mf_process_reaped(info->si_pid, W_EXITCODE(info->si_status, 0));
	else if (code == CLD_KILLED || code == CLD_DUMPED)
		mf_process_reaped(info->si_pid,
				  info->si_status | (code == CLD_DUMPED ? WCOREFLAG : 0));
}
