/* Snapshots: every thread's counts copied, at the caller's request, into a directory of their
 * own in the process directory (malloc_freq_format.h says what it holds). Made under a
 * temporary name and renamed when whole. Each running thread's file is copied exact (no call
 * half counted): copied again while the thread records meanwhile, and if it keeps recording,
 * copied while it waits (mf_thread_each_file). An interval or signal snapshot builds on the
 * one before: it takes only the files whose state changed since a snapshot of its chain took
 * them (a hash of that state is kept in each file's header), so a long run's snapshots take
 * the disk space of what changed, not of every thread each time (each still reads every
 * file's header); every MF_SNAP_CHAIN_MAX-th is full. Ended threads' files are packed into
 * one (pack.c) as a snapshot meets them, and then are in every later snapshot by the pack's
 * length, which the snapshot's record keeps. Runs in the program's threads (and the
 * profiler's control thread): no malloc, no stdio, errno kept. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* renameat (only: no stdio is used) */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
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
static uint64_t mf_snap_attempts;   /* snapshots tried in this process, taken or not */
/* The attempt of the full snapshot the last one taken builds on (or is); 0: the next one is
 * full (none taken yet, or the last one failed: a file's mark may name what it never held). */
static uint64_t mf_snap_chain;
/* A chain's length is bounded: every MF_SNAP_CHAIN_MAX-th background snapshot is full, so that
 * reading one reads at most that many, and removing old ones spares the later chains. */
enum { MF_SNAP_CHAIN_MAX = 64 };
static unsigned mf_snap_links; /* the snapshots of the current chain after its full one */
static _Alignas(8) unsigned char mf_snap_page[MF_HEADER_SIZE];
static _Alignas(8) char mf_snap_dirents[16 << 10];
static _Alignas(8) unsigned char mf_snap_read[16 << 10]; /* an ended file's nodes, hashed */

struct mf_snap_call {
	unsigned long n;
	const char *label;
	uint32_t flags;
	int dir, tmp; /* descriptors: the process directory, the snapshot made */
	int ended;    /* `ended`, the ended threads' files it names (-1: not made yet) */
	char tmp_name[64], name[32 + MF_SNAPSHOT_LABEL_LEN];
	struct mf_snapshot_record rec;
	uint64_t attempt; /* its attempt: the files it takes are marked with it */
	uint64_t chain;	  /* the full snapshot's attempt: a mark since then was taken (0: full) */
	int err;	  /* the first error (-errno) */
	int packing;	  /* ended files are still packed (pack.c): no step of it failed yet */
};

/* The bytes of a header that hold anything: up to its last timeline record (the rest is zeros,
 * or records that room was made from: read by none), in whole pages. A copy takes these and
 * leaves the rest of the header a hole, so a thread that kept few records costs a snapshot no
 * more than its first page. */
static size_t mf_snap_header_used(const struct mf_prof_header *h)
{
	uint32_t n =
	    h->timeline_count < MF_TIMELINE_RECORDS ? h->timeline_count : MF_TIMELINE_RECORDS;
	size_t used = MF_TIMELINE_OFFSET + n * sizeof(struct mf_timeline_record);
	return mf_pages_round(used);
}

/* A copy of a header, its snapshot marks taken out and hashed: what the marks said. */
struct mf_snap_mark {
	uint64_t pid, attempt, sum;
};

static struct mf_snap_mark mf_snap_unmark(struct mf_prof_header *copy)
{
	struct mf_snap_mark m = {copy->snap_pid, copy->snap_attempt, copy->snap_sum};
	copy->snap_pid = copy->snap_attempt = copy->snap_sum = 0;
	return m;
}

/* Whether a file marked was taken as it is (sum) by a snapshot of c's chain: left out. */
static int mf_snap_same(const struct mf_snap_call *c, struct mf_snap_mark m, uint64_t sum)
{
	return c->chain && m.pid == c->rec.pid && m.attempt >= c->chain && m.sum == sum;
}

static uint64_t mf_snap_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A running thread's file, copied: its header (the node count read first, the state saying it
 * is a copy), then that many nodes; a pass after the first writes the file over. Left out of a
 * snapshot that builds on another if a snapshot of its chain took it as it is. */
static void mf_snap_copy(const struct mf_prof_file *f, unsigned pass, void *arg)
{
	struct mf_snap_call *c = arg;
	struct mf_prof_header *h = f->header;
	uint64_t count = __atomic_load_n(&h->node_count, __ATOMIC_ACQUIRE);
	size_t nodes = count * sizeof(struct mf_node);
	if (c->err)
		return;
	size_t used = mf_snap_header_used(h);
	memcpy(mf_snap_page, h, used);
	struct mf_prof_header *copy = (struct mf_prof_header *)mf_snap_page;
	copy->node_count = count;
	struct mf_snap_mark mark = mf_snap_unmark(copy);
	uint64_t sum = mf_hash_words(mf_hash_words(1, mf_snap_page, used), f->nodes, nodes);
	int made = pass && faccessat(c->tmp, f->name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	if (!made && mf_snap_same(c, mark, sum))
		return;
	c->rec.threads += !made;
	copy->state = MF_STATE_SNAPSHOT;
	copy->end_ns = c->rec.time_ns; /* (the same in every copy: one left out reads as taken) */
	int err = mf_prof_size_allowed((off_t)(MF_HEADER_SIZE + nodes));
	int fd = err ? -1
		     : openat(c->tmp, f->name,
			      O_WRONLY | O_CREAT | (made ? O_TRUNC : O_EXCL) | O_CLOEXEC,
			      mf_config.file_mode);
	if (!err && fd < 0)
		err = -errno;
	if (!err)
		err = mf_write_all(fd, mf_snap_page, used);
	if (!err && ftruncate(fd, MF_HEADER_SIZE)) /* (the rest of the header: a hole) */
		err = -errno;
	if (!err && lseek(fd, MF_HEADER_SIZE, SEEK_SET) < 0)
		err = -errno;
	if (!err)
		err = mf_write_all(fd, f->nodes, nodes);
	if (fd >= 0)
		close(fd);
	if (!err) { /* (words no thread writes but a snapshot, under mf_snap_lock) */
		h->snap_pid = c->rec.pid;
		h->snap_attempt = c->attempt;
		h->snap_sum = sum;
	}
	c->err = err;
}

/* The bytes of fd from `at` to `end` copied to the same place in `to`: 0 or -errno. */
static int mf_snap_copy_range(int fd, int to, off_t at, off_t end)
{
	while (at < end) {
		off_t out = at;
		ssize_t n = copy_file_range(fd, &at, to, &out, (size_t)(end - at), 0);
		if (n > 0)
			continue;
		if (n == 0)
			break;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return -errno;
		n = pread(fd, mf_snap_read,
			  end - at < (off_t)sizeof(mf_snap_read) ? (size_t)(end - at)
								 : sizeof(mf_snap_read),
			  at); /* (a file system without) */
		if (n <= 0)
			return n < 0 ? -errno : 0;
		if (pwrite(to, mf_snap_read, (size_t)n, at) != n)
			return -(errno ? errno : EIO);
		at += n;
	}
	return 0;
}

/* An ended thread's file fd, whose header is in mf_snap_page, copied as name into the
 * snapshot: its header up to its last record and its nodes up to the last (size bytes: the
 * room it never used stays out, the rest of its header a hole). 0 or -errno. */
static int mf_snap_copy_ended(struct mf_snap_call *c, int fd, const char *name, off_t size)
{
	struct stat st;
	if (fstat(fd, &st))
		return -errno;
	if (size < st.st_size)
		st.st_size = size;
	off_t used = (off_t)mf_snap_header_used((const struct mf_prof_header *)mf_snap_page);
	int err = mf_prof_size_allowed(st.st_size);
	int to = err ? -1
		     : openat(c->tmp, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			      mf_config.file_mode);
	if (!err && to < 0)
		err = -errno;
	if (!err)
		err = mf_snap_copy_range(fd, to, 0, used < st.st_size ? used : st.st_size);
	if (!err && st.st_size > MF_HEADER_SIZE)
		err = mf_snap_copy_range(fd, to, MF_HEADER_SIZE, st.st_size);
	if (!err && ftruncate(to, st.st_size))
		err = -errno;
	if (to >= 0)
		close(to);
	return err;
}

/* name, an ended thread's file, named in the snapshot's `ended`: 0 or -errno. */
static int mf_snap_name_ended(struct mf_snap_call *c, const char *name)
{
	if (c->ended < 0) {
		c->ended = openat(c->tmp, "ended", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				  mf_config.file_mode);
		if (c->ended < 0)
			return -errno;
	}
	size_t len = strlen(name);
	char line[NAME_MAX + 2];
	memcpy(line, name, len);
	line[len] = '\n';
	return mf_write_all(c->ended, line, len + 1);
}

/* The hash of an ended thread's file fd whose header (marks out) is in mf_snap_page: with
 * lifetimes, its nodes too (frees still change them). */
static uint64_t mf_snap_sum_ended(int fd, int life)
{
	const struct mf_prof_header *h = (const struct mf_prof_header *)mf_snap_page;
	uint64_t sum = mf_hash_words(1, mf_snap_page, mf_snap_header_used(h));
	uint64_t left = life ? h->node_count * sizeof(struct mf_node) : 0;
	for (off_t at = MF_HEADER_SIZE; left;) {
		ssize_t n = pread(fd, mf_snap_read,
				  left < sizeof(mf_snap_read) ? left : sizeof(mf_snap_read), at);
		if (n <= 0 || n % 8)
			return sum ^ 1; /* (cut short: taken again, as changed) */
		sum = mf_hash_words(sum, mf_snap_read, (size_t)n);
		at += n, left -= (uint64_t)n;
	}
	return sum;
}

/* Whether an ended thread's file fd with lifetimes, its header in mf_snap_page, can change no
 * more (mf_life_nodes_final): then it is named, as without lifetimes, not copied. */
static int mf_snap_ended_final(int fd)
{
	const struct mf_prof_header *h = (const struct mf_prof_header *)mf_snap_page;
	uint64_t n = h->node_count;
	size_t len = (size_t)n * sizeof(struct mf_node);
	struct stat st;
	if (!n || !(h->records & MF_RECORD_LIFE)) /* (an image's without lifetimes: no frees) */
		return 1;
	if (fstat(fd, &st) || st.st_size < (off_t)(MF_HEADER_SIZE + len))
		return 0; /* (a mapping past the end would fault: copied, as it stands) */
	void *nodes = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, MF_HEADER_SIZE);
	if (nodes == MAP_FAILED)
		return 0;
	int final = mf_life_nodes_final(nodes, n);
	munmap(nodes, len);
	return final;
}

/* A thread file of the directory that is not a running thread's: if finalized, packed (pack.c:
 * without lifetimes, it never changes again) and so removed; else, if changed since its chain
 * took it, named, or with lifetimes copied while it still can change (later frees of its blocks
 * still count in it). One still being made by a starting thread holds nothing yet. */
static void mf_snap_link(struct mf_snap_call *c, const char *name)
{
	int fd = openat(c->dir, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC), marks = fd >= 0;
	if (fd < 0)
		fd = openat(c->dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	struct mf_prof_header *h = (struct mf_prof_header *)mf_snap_page;
	ssize_t r = pread(fd, mf_snap_page, MF_HEADER_SIZE, 0);
	int err = 1; /* (not an ended thread's) */
	if (r == MF_HEADER_SIZE &&
	    (h->state == MF_STATE_THREAD_EXIT || h->state == MF_STATE_PROCESS_EXIT)) {
		struct mf_snap_mark mark = mf_snap_unmark(h);
		off_t size = (off_t)(MF_HEADER_SIZE + h->node_count * sizeof(struct mf_node));
		uint64_t sum = mf_snap_sum_ended(fd, mf_life_on);
		int same = marks && mf_snap_same(c, mark, sum), packed = 0;
		/* (packed: in the pack below its pack_len, counted if new to the chain; a failed
		 * step leaves the file, named below, and the next snapshot tries again. Never the
		 * file of a thread still listed (ended in strict mode): a later snapshot copies it
		 * from its mapping, which would count it twice) */
		if (c->packing && !mf_life_on && !mf_thread_holds(name) &&
		    ((packed = mf_pack_file(c->dir, fd, name, h, (pid_t)c->rec.pid)) < 0 ||
		     packed == 2))
			c->packing = 0;
		if (packed > 0)
			err = same;
		else if (same)
			err = 1;
		else if (mf_life_on && !mf_snap_ended_final(fd))
			err = mf_snap_copy_ended(c, fd, name, size);
		else
			err = mf_snap_name_ended(c, name);
		mark = (struct mf_snap_mark){c->rec.pid, c->attempt, sum};
		/* (a mark not written: the old one does not match, and it is taken again) */
		if (!err && marks && packed <= 0)
			(void)!pwrite(fd, &mark, sizeof(mark),
				      offsetof(struct mf_prof_header, snap_pid));
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
		c->rec.pack_len = mf_pack_length((pid_t)c->rec.pid);
		if (c->ended >= 0 && close(c->ended) && !c->err)
			c->err = -errno;
		c->ended = -1;
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
		if (mf_snap_pid != pid) { /* (a forked child numbers its own from 1) */
			mf_snap_pid = pid, mf_snap_taken = 0, mf_snap_exiting = 0;
			mf_snap_attempts = 0, mf_snap_chain = 0, mf_snap_links = 0;
		}
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
		c.tmp = c.ended = -1;
		c.packing = 1;
		c.attempt = ++mf_snap_attempts;
		/* (the program's own and resets are full: each reads alone, as asked) */
		if (background && !(flags & MF_SNAPSHOT_RESET) && mf_snap_taken &&
		    mf_snap_links + 1 < MF_SNAP_CHAIN_MAX)
			c.chain = mf_snap_chain;
		c.rec.builds_on = c.chain ? mf_snap_taken : 0;
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
		mf_snap_chain = r < 0 ? 0 : c.chain ? c.chain : c.attempt;
		mf_snap_links = r < 0 ? 0 : c.chain ? mf_snap_links + 1 : 0;
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
