/* Snapshots: every thread's counts copied, at the caller's request, into a directory of their
 * own in the process directory (malloc_freq_format.h says what it holds). Made under a
 * temporary name and renamed when whole. Each running thread's file is copied exact (no call
 * half counted): copied again while the thread records meanwhile, and if it keeps recording,
 * copied while it waits (mf_thread_each_file). Runs in the program's threads
 * (and the profiler's control thread): no malloc, no stdio, errno kept. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* renameat (only: no stdio is used) */
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "life/life.h"
#include "malloc_freq.h"
#include "mf_internal.h"
#include "thread.h"

/* Under it, one snapshot at a time; the buffers below are its. */
static pthread_mutex_t mf_snap_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long mf_snap_taken; /* the last snapshot's number, in this process */
static pid_t mf_snap_pid;	    /* the process mf_snap_taken counts for */
static int mf_snap_exiting;	    /* exit() has begun: the control thread takes no more */
static _Alignas(8) unsigned char mf_snap_page[MF_HEADER_SIZE];
static _Alignas(8) char mf_snap_dirents[16 << 10];

struct mf_snap_call {
	unsigned long n;
	const char *label;
	uint32_t flags;
	int dir, tmp; /* descriptors: the process directory, the snapshot made */
	char tmp_name[64], name[32 + MF_SNAPSHOT_LABEL_LEN];
	struct mf_snapshot_record rec;
	int err; /* the first error (-errno) */
};

static uint64_t mf_snap_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A running thread's file, copied: its header (the node count read first, the state saying it
 * is a copy), then that many nodes; a pass after the first writes the file over. */
static void mf_snap_copy(const struct mf_prof_file *f, unsigned pass, void *arg)
{
	struct mf_snap_call *c = arg;
	const struct mf_prof_header *h = f->header;
	uint64_t count = __atomic_load_n(&h->node_count, __ATOMIC_ACQUIRE);
	size_t nodes = count * sizeof(struct mf_node);
	c->rec.threads += !pass;
	if (c->err)
		return;
	memcpy(mf_snap_page, h, MF_HEADER_SIZE);
	struct mf_prof_header *copy = (struct mf_prof_header *)mf_snap_page;
	copy->node_count = count;
	copy->state = MF_STATE_SNAPSHOT;
	copy->end_ns = mf_snap_now();
	int err = mf_prof_size_allowed((off_t)(MF_HEADER_SIZE + nodes));
	int fd = err ? -1
		     : openat(c->tmp, f->name,
			      O_WRONLY | O_CREAT | (pass ? O_TRUNC : O_EXCL) | O_CLOEXEC,
			      mf_config.file_mode);
	if (!err && fd < 0)
		err = -errno;
	if (!err)
		err = mf_write_all(fd, mf_snap_page, MF_HEADER_SIZE);
	if (!err)
		err = mf_write_all(fd, f->nodes, nodes);
	if (fd >= 0)
		close(fd);
	c->err = err;
}

/* An ended thread's file fd copied as name into the snapshot: 0 or -errno. */
static int mf_snap_copy_ended(struct mf_snap_call *c, int fd, const char *name)
{
	struct stat st;
	if (fstat(fd, &st))
		return -errno;
	int err = mf_prof_size_allowed(st.st_size);
	int to = err ? -1
		     : openat(c->tmp, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			      mf_config.file_mode);
	if (!err && to < 0)
		err = -errno;
	off_t at = 0;
	while (!err && at < st.st_size) {
		ssize_t n = copy_file_range(fd, &at, to, NULL, (size_t)(st.st_size - at), 0);
		if (n > 0)
			continue;
		if (n == 0)
			break;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
			err = -errno;
			break;
		}
		n = pread(fd, mf_snap_page, sizeof(mf_snap_page), at); /* (a file system without) */
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		err = mf_write_all(to, mf_snap_page, (size_t)n);
		at += n;
	}
	if (to >= 0)
		close(to);
	return err;
}

/* A thread file of the directory that is not a running thread's: linked if finalized (it never
 * changes again), or with lifetimes copied (later frees of its blocks still count in it); one
 * still being made by a starting thread holds nothing yet. */
static void mf_snap_link(struct mf_snap_call *c, const char *name)
{
	uint32_t state = 0;
	int fd = openat(c->dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t r = pread(fd, &state, sizeof(state), offsetof(struct mf_prof_header, state));
	int err = 1; /* (not an ended thread's) */
	if (r == sizeof(state) &&
	    (state == MF_STATE_THREAD_EXIT || state == MF_STATE_PROCESS_EXIT)) {
		if (mf_life_on)
			err = mf_snap_copy_ended(c, fd, name);
		else
			err = linkat(c->dir, name, c->tmp, name, 0) ? -errno : 0;
	}
	close(fd);
	if (!err)
		c->rec.threads++;
	else if (err < 0 && !c->err)
		c->err = err;
}

static int mf_snap_is_prof(const char *name)
{
	size_t len = strlen(name);
	return len > 5 && !strcmp(name + len - 5, ".prof");
}

/* The thread files of the process directory that no running thread holds. */
static void mf_snap_ended(struct mf_snap_call *c)
{
	int fd = openat(c->dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		c->err = -errno;
		return;
	}
	long n;
	while ((n = syscall(SYS_getdents64, fd, mf_snap_dirents, sizeof(mf_snap_dirents))) > 0) {
		for (long at = 0; at < n;) {
			struct dirent64 *e = (struct dirent64 *)(mf_snap_dirents + at);
			at += e->d_reclen;
			if (!mf_snap_is_prof(e->d_name) ||
			    faccessat(c->tmp, e->d_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
				continue; /* (copied already: a running thread's) */
			mf_snap_link(c, e->d_name);
		}
	}
	close(fd);
}

/* The snapshot's name: snap.<n>, and .<label> with every byte but [A-Za-z0-9_-] made '_'. */
static void mf_snap_name(struct mf_snap_call *c)
{
	int len = mf_format(c->name, sizeof(c->name), "snap.%lu", c->n);
	char *label = c->rec.label;
	size_t i = 0;
	for (const char *s = c->label; s && *s && i < MF_SNAPSHOT_LABEL_LEN - 1; s++, i++) {
		char ch = *s;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
		label[i] = ok ? ch : '_';
	}
	label[i] = 0;
	if (i)
		mf_format(c->name + len, sizeof(c->name) - (size_t)len, ".%s", label);
}

static long mf_snap_apart(void *arg)
{
	struct mf_snap_call *c = arg;
	c->dir = mf_prof_dir_open();
	if (c->dir < 0)
		return c->dir;
	mf_format(c->tmp_name, sizeof(c->tmp_name), ".snap.%lu.tmp", c->n);
	int err = 0;
	if (mkdirat(c->dir, c->tmp_name, mf_config.dir_mode))
		err = -errno;
	c->tmp = err ? -1 : openat(c->dir, c->tmp_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err && c->tmp < 0)
		err = -errno;
	if (!err) {
		c->rec.time_ns = mf_snap_now();
		if (mf_life_on) /* (its peaks as of now: a reader cannot bring a copy up to date) */
			mf_life_settle();
		mf_thread_each_file(mf_snap_copy, c);
		if (!c->err)
			mf_snap_ended(c);
		err = c->err;
	}
	if (!err) {
		int fd = openat(c->tmp, "snapshot", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				mf_config.file_mode);
		err = fd < 0 ? -errno : mf_write_all(fd, &c->rec, sizeof(c->rec));
		if (fd >= 0)
			close(fd);
	}
	if (!err && renameat(c->dir, c->tmp_name, c->dir, c->name))
		err = -errno;
	if (err && c->tmp >= 0) { /* (what was made goes: no half snapshot stays) */
		long n;
		lseek(c->tmp, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, c->tmp, mf_snap_dirents,
				    sizeof(mf_snap_dirents))) > 0)
			for (long at = 0; at < n;) {
				struct dirent64 *e = (struct dirent64 *)(mf_snap_dirents + at);
				at += e->d_reclen;
				unlinkat(c->tmp, e->d_name, 0);
			}
		unlinkat(c->dir, c->tmp_name, AT_REMOVEDIR);
	}
	if (c->tmp >= 0)
		close(c->tmp);
	mf_prof_dir_close(c->dir);
	return err;
}

long mf_snapshot_take(const char *label, uint32_t flags)
{
	int saved = errno, cancel = mf_nocancel_begin();
	mf_busy_enter();
	unsigned quiet = mf_thread_quiet(1);
	mf_fork_hold();
	long r = mf_prof_dir_ensure();
	if (!r) {
		pthread_mutex_lock(&mf_snap_lock);
		pid_t pid = getpid();
		if (mf_snap_pid != pid) /* (a forked child numbers its own from 1) */
			mf_snap_pid = pid, mf_snap_taken = 0, mf_snap_exiting = 0;
		uint32_t background = flags & MF_SNAPSHOT_BACKGROUND;
		if (background && mf_snap_exiting) {
			pthread_mutex_unlock(&mf_snap_lock);
			r = -ECANCELED;
			goto out;
		}
		flags &= ~MF_SNAPSHOT_BACKGROUND;
		static struct mf_snap_call c;
		memset(&c, 0, sizeof(c));
		c.n = mf_snap_taken + 1;
		c.label = label;
		c.tmp = -1;
		memcpy(c.rec.magic, MF_SNAPSHOT_MAGIC, sizeof(c.rec.magic));
		c.rec.version = MF_FORMAT_VERSION;
		c.rec.byte_order = MF_BYTE_ORDER_MARK;
		c.rec.record_size = sizeof(c.rec);
		c.rec.flags = flags;
		c.rec.number = c.n;
		c.rec.pid = (uint64_t)pid;
		mf_snap_name(&c);
		r = mf_fds_apart(mf_snap_apart, &c);
		if (!r)
			r = (long)(mf_snap_taken = c.n);
		/* (the program hears of its own snapshot's failure; no one asks for these) A full
		 * disk, say: each later one is tried as usual, so they come again with room. */
		if (r < 0 && background)
			MF_LOG_ONCE(
			    "cannot write snapshot %s in %s: %s; nothing of it is left, and "
			    "later ones are tried as usual (said once)",
			    c.name, mf_prof_dir(), strerrordesc_np((int)-r));
		pthread_mutex_unlock(&mf_snap_lock);
	}
out:
	mf_fork_release();
	mf_thread_quiet(quiet);
	mf_busy_leave();
	mf_nocancel_end(cancel);
	errno = saved;
	return r;
}

void mf_snapshot_exit(void)
{
	unsigned quiet = mf_thread_quiet(1);
	pthread_mutex_lock(&mf_snap_lock); /* (a snapshot being taken is finished first) */
	mf_snap_exiting = 1;
	pthread_mutex_unlock(&mf_snap_lock);
	mf_thread_quiet(quiet);
}
