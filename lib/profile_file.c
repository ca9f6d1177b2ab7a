/* The process directory malloc_freq.<pid>[.<n>] and the per-thread files <tid>[.<n>].prof:
 * created exclusively (never overwriting, never through a symlink), in a directory no other
 * user can replace them in, with MALLOC_FREQ_MODE (the owner's only), space reserved with
 * posix_fallocate so a full disk cannot SIGBUS the host, mapped shared, no descriptor kept.
 * Every file is created and reopened relative to the directory as it was made (opened without
 * following a link, its device and inode checked), never by walking its path again: another
 * user who swaps it for a link or another directory gets nothing written there. Slow path
 * only: no malloc, no stdio. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "life/life.h"
#include "loaded.h"
#include "mf_internal.h"
#include "parse.h"

#define MF_NODES_INITIAL 256
/* Address space a thread's file is mapped in, header and nodes at once, at first: the file
 * grows under it (512 Ki nodes) without another mapping. */
#define MF_FILE_RESERVE	      (16u << 20)
#define MF_FILE_RESERVE_LIFE  ((size_t)1 << 30) /* 32 Mi nodes */
#define MF_FILE_RESERVE_SHARE 256		/* of RLIMIT_AS, at most */
#define MF_SUFFIX_MAX	      100000

static char mf_dir[MF_PATH_LEN];
static pid_t mf_dir_pid; /* the process mf_dir was made for; 0: none yet */
static dev_t mf_dir_dev; /* mf_dir as it was made */
static ino_t mf_dir_ino;
static int mf_dir_kept = -1;  /* mf_dir, kept open once a chroot would hide its path */
static int mf_base_kept = -1; /* likewise, mf_config.dir: where a forked child's goes */
static dev_t mf_base_dev;     /* mf_base_kept's directory */
static ino_t mf_base_ino;
static int mf_kept_lost; /* the program closed or reused a descriptor we kept */
static pthread_mutex_t mf_dir_lock = PTHREAD_MUTEX_INITIALIZER; /* first calls of two threads */

static uint64_t mf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int mf_prof_dir_make(pid_t pid);

/* *kept if it is still the directory (dev, ino) it was kept for. A program may close the
 * descriptors it does not know of (close_range after chroot) or put one of its own at the
 * number: then it is the program's, never used nor closed by us again, and what was kept for a
 * chroot is lost for good (paths would now lead into the program's tree). */
static int mf_prof_kept(int *kept, dev_t dev, ino_t ino)
{
	struct stat st;
	if (*kept < 0 || (fstat(*kept, &st) == 0 && st.st_dev == dev && st.st_ino == ino))
		return *kept;
	mf_fds_apart_keep(*kept, -1);
	*kept = -1;
	mf_kept_lost = 1;
	MF_LOG_ONCE("the program closed or replaced the directory descriptors kept for its chroot; "
		    "no profile file can be made from now on (those made record on)");
	return -1;
}

static long mf_prof_dir_make_apart(void *pid)
{
	return mf_prof_dir_make(*(pid_t *)pid);
}

int mf_prof_dir_ensure(void)
{
	if (!mf_config.dir[0]) /* (the library did not start: no directory was chosen) */
		return -ENOSYS;
	pid_t pid = getpid();
	if (__atomic_load_n(&mf_dir_pid, __ATOMIC_ACQUIRE) == pid)
		return 0;
	pthread_mutex_lock(&mf_dir_lock);
	if (mf_dir_pid != pid && mf_prof_kept(&mf_dir_kept, mf_dir_dev, mf_dir_ino) >= 0) {
		/* a chrooted parent's: not this directory (here: in the program's table) */
		close(mf_dir_kept);
		mf_fds_apart_keep(mf_dir_kept, -1);
		mf_dir_kept = -1;
	}
	int r = mf_dir_pid == pid ? 0 : (int)mf_fds_apart(mf_prof_dir_make_apart, &pid);
	pthread_mutex_unlock(&mf_dir_lock);
	return r;
}

/* Makes directory name in mf_config.dir (by its descriptor once a chroot hid its path) and
 * notes what it is; 0 or an errno. */
static int mf_prof_dir_mkdir(const char *name, struct stat *st)
{
	if (mf_prof_kept(&mf_base_kept, mf_base_dev, mf_base_ino) >= 0) {
		if (mkdirat(mf_base_kept, name, mf_config.dir_mode) ||
		    fstatat(mf_base_kept, name, st, AT_SYMLINK_NOFOLLOW))
			return errno;
	} else if (mf_kept_lost) {
		return EBADF;
	} else if (mkdir(mf_dir, mf_config.dir_mode) || lstat(mf_dir, st)) {
		return errno;
	}
	return S_ISDIR(st->st_mode) ? 0 : ENOTDIR; /* (replaced at once: not ours) */
}

/* The directory the process directories go in must keep them from other users (parse.h:
 * mf_dir_unsafe): else nothing is made there. 0, or EPERM after saying why. */
static int mf_prof_base_check(void)
{
	static char why[256]; /* under mf_dir_lock */
	struct stat st;
	int kept = mf_prof_kept(&mf_base_kept, mf_base_dev, mf_base_ino);
	if ((kept >= 0 ? fstat(kept, &st) : stat(mf_config.dir, &st)) || !S_ISDIR(st.st_mode) ||
	    !mf_dir_unsafe(&st, geteuid(), getegid(), why, sizeof(why)))
		return 0; /* (what is not a directory, mkdir names) */
	mf_log("cannot create a profile directory in %s: %s; not recording", mf_config.dir, why);
	return EPERM;
}

static int mf_prof_dir_make(pid_t pid)
{
	static char name[64]; /* under mf_dir_lock: off the caller's stack */
	struct stat st;
	int err = mf_prof_base_check();
	if (err)
		return -err;
	err = EEXIST;
	for (unsigned n = 0; n < MF_SUFFIX_MAX && err == EEXIST; n++) {
		if (n == 0)
			mf_format(name, sizeof(name), "malloc_freq.%d", (int)pid);
		else
			mf_format(name, sizeof(name), "malloc_freq.%d.%u", (int)pid, n);
		mf_format(mf_dir, sizeof(mf_dir), "%s/%s", mf_config.dir, name);
		if ((err = mf_prof_dir_mkdir(name, &st)))
			continue;
		mf_dir_dev = st.st_dev;
		mf_dir_ino = st.st_ino;
		__atomic_store_n(&mf_dir_pid, pid, __ATOMIC_RELEASE);
		mf_modules_write();
		mf_process_created(pid, n);
		return 0;
	}
	mf_log("cannot create a profile directory in %s: %s; not recording", mf_config.dir,
	       strerrordesc_np(err));
	return -err;
}

static int mf_prof_dir_is_mine(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == mf_dir_dev && st.st_ino == mf_dir_ino;
}

/* The directory made, looked for by its inode in the directory it was made in: someone moved
 * it (and perhaps put a link in its place). Its descriptor, mf_dir renamed; or -1. */
static int mf_prof_dir_find(void)
{
	int base = mf_prof_kept(&mf_base_kept, mf_base_dev, mf_base_ino);
	if (base < 0 && !mf_kept_lost)
		base = open(mf_config.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return -1;
	char buf[2048];
	long n;
	int found = -1;
	while (found < 0 && (n = syscall(SYS_getdents64, base, buf, sizeof(buf))) > 0) {
		for (long at = 0; found < 0 && at < n;) {
			const struct dirent64 *d = (const void *)(buf + at);
			at += d->d_reclen;
			if (d->d_ino != mf_dir_ino || d->d_type != DT_DIR)
				continue;
			int fd =
			    openat(base, d->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && mf_prof_dir_is_mine(fd)) {
				char was[MF_PATH_LEN];
				memcpy(was, mf_dir, sizeof(was));
				mf_format(mf_dir, sizeof(mf_dir), "%s/%s", mf_config.dir,
					  d->d_name);
				MF_LOG_ONCE(
				    "the profile directory %s was moved to %s; recording goes "
				    "on there",
				    was, mf_dir);
				found = fd;
			} else if (fd >= 0) {
				close(fd);
			}
		}
	}
	if (base != mf_base_kept)
		close(base);
	return found;
}

int mf_prof_dir_open(void)
{
	int fd = mf_prof_kept(&mf_dir_kept, mf_dir_dev, mf_dir_ino);
	if (fd >= 0)
		return fd;
	if (mf_kept_lost)
		return -EBADF;
	fd = open(mf_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && mf_prof_dir_is_mine(fd))
		return fd;
	int err = fd < 0 ? errno : ESTALE;
	if (fd >= 0)
		close(fd);
	if (err != ELOOP && err != ENOTDIR && err != ENOENT && err != ESTALE)
		return -err; /* (the caller says) */
	if ((fd = mf_prof_dir_find()) >= 0)
		return fd;
	MF_LOG_ONCE("the profile directory %s is gone or replaced, and not found where it was "
		    "made; nothing more is written there",
		    mf_dir);
	return -err;
}

void mf_prof_dir_close(int fd)
{
	if (fd >= 0 && fd != mf_dir_kept && fd != mf_base_kept)
		close(fd);
}

/* A descriptor, not below 100 (where a program counts on the lowest ones being free), for a
 * directory kept open: path's, or -1. */
static int mf_prof_keep(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	close(fd);
	return high;
}

void mf_prof_dir_keep(void)
{
	struct stat st;
	if (mf_confined) /* (seccomp strict mode: chroot is killed, and so would this be) */
		return;
	if (mf_base_kept < 0 && (mf_base_kept = mf_prof_keep(mf_config.dir)) >= 0) {
		if (fstat(mf_base_kept, &st) == 0) {
			mf_base_dev = st.st_dev;
			mf_base_ino = st.st_ino;
			mf_fds_apart_keep(-1, mf_base_kept);
		} else {
			close(mf_base_kept);
			mf_base_kept = -1;
		}
	}
	if (mf_dir_kept < 0 && mf_prof_dir_mine()) {
		int fd = mf_prof_dir_open();
		if (fd >= 0) {
			mf_dir_kept = fcntl(fd, F_DUPFD_CLOEXEC, 100);
			mf_fds_apart_keep(-1, mf_dir_kept);
			close(fd);
		}
	}
}

const char *mf_prof_dir(void)
{
	return mf_dir_pid ? mf_dir : NULL;
}

int mf_prof_dir_mine(void)
{
	return __atomic_load_n(&mf_dir_pid, __ATOMIC_ACQUIRE) == getpid();
}

void mf_prof_dir_forget(void)
{
	mf_process_forget();
	mf_dir_pid = 0; /* (mf_dir_kept, if any, is closed when the child's is made) */
	pthread_mutex_init(&mf_dir_lock, NULL); /* in a forked child: whatever its state was */
}

/* Gives the directory and its files to *arg's uid: 0, or the errno of the first that stays
 * another's. */
static long mf_prof_give_apart(void *arg)
{
	uid_t uid = *(uid_t *)arg;
	int dir = mf_prof_dir_open();
	int fd = dir < 0 ? -1 : openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;
	char buf[1024];
	long n;
	while (fd >= 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < n;) {
			const struct dirent64 *d = (const void *)(buf + at);
			if (d->d_type == DT_REG &&
			    fchownat(dir, d->d_name, uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) && !err)
				err = errno;
			at += d->d_reclen;
		}
	}
	if (fd >= 0) {
		close(fd);
		if (fchownat(dir, "", uid, (gid_t)-1, AT_EMPTY_PATH) && !err)
			err = errno;
	}
	mf_prof_dir_close(dir);
	return err;
}

void mf_prof_give_to(uid_t uid)
{
	if (mf_confined || uid == (uid_t)-1 || uid == geteuid() || !mf_prof_dir_mine())
		return;
	long err = mf_fds_apart(mf_prof_give_apart, &uid);
	if (err)
		mf_log("cannot give the profile in %s to user %u (%s); as that user, the process "
		       "cannot add to it",
		       mf_prof_dir(), (unsigned)uid, strerrordesc_np((int)(err < 0 ? -err : err)));
}

int mf_prof_size_allowed(off_t size)
{
	/* Past RLIMIT_FSIZE the kernel would answer with SIGXFSZ, which kills the program. */
	struct rlimit lim;
	if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)size > lim.rlim_cur)
		return -EFBIG;
	return 0;
}

/* Reserves the bytes from `from` to `end` on disk, the file at least `end` long. 0 or -errno. */
static int mf_prof_reserve(int fd, off_t from, off_t end)
{
	int err = mf_prof_size_allowed(end);
	if (err)
		return err;
	err = posix_fallocate(fd, from, end - from);
	/* Filesystems without fallocate: glibc emulates it; EOPNOTSUPP only from odd ones, where
	 * ftruncate is the best left (a full disk may then fault). */
	struct stat st;
	if (err == EOPNOTSUPP)
		err = fstat(fd, &st)	   ? errno
		      : st.st_size >= end  ? 0
		      : ftruncate(fd, end) ? errno
					   : 0;
	return -err;
}

size_t mf_prof_as_share(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_AS, &r) || r.rlim_cur == RLIM_INFINITY)
		return SIZE_MAX;
	return (size_t)(r.rlim_cur / MF_FILE_RESERVE_SHARE) & ~(size_t)(MF_PAGE_SIZE - 1);
}

/* The address space a new thread file's mapping reserves, to grow into (with lifetimes it never
 * moves, so that is all it can hold): MF_FILE_RESERVE, or MF_FILE_RESERVE_LIFE; where the
 * address space is limited (RLIMIT_AS), at most a 256th of the limit, so as not to take from
 * the program what it would have had. At least size. */
static size_t mf_prof_reservation(size_t size)
{
	size_t reserve = mf_config.lifetimes ? MF_FILE_RESERVE_LIFE : MF_FILE_RESERVE;
	size_t share = mf_prof_as_share();
	reserve = share < reserve ? share : reserve;
	return reserve > size ? reserve : size;
}

static void *mf_prof_map(int fd, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, off);
	return p == MAP_FAILED ? NULL : p;
}

struct mf_prof_open_call {
	struct mf_prof_file *f;
	pid_t tid;
};

static long mf_prof_open_apart(void *arg)
{
	struct mf_prof_file *f = ((struct mf_prof_open_call *)arg)->f;
	pid_t tid = ((struct mf_prof_open_call *)arg)->tid;
	int fd = -1, err, dir = mf_prof_dir_open();
	if (dir < 0)
		return dir;
	for (unsigned n = 0; n < MF_SUFFIX_MAX && fd < 0; n++) {
		if (n == 0)
			mf_format(f->name, sizeof(f->name), "%d.prof", (int)tid);
		else
			mf_format(f->name, sizeof(f->name), "%d.%u.prof", (int)tid, n);
		fd = openat(dir, f->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    mf_config.file_mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	err = fd < 0 ? -errno : 0;
	mf_format(f->path, sizeof(f->path), "%s/%s", mf_dir, f->name);
	if (fd < 0) {
		mf_prof_dir_close(dir);
		return err;
	}
	f->capacity = MF_NODES_INITIAL;
	f->header_whole = 0;
	struct stat st;
	size_t size = MF_HEADER_SIZE + f->capacity * sizeof(struct mf_node);
	/* (the header's pages after the first stay a hole until the timeline needs them) */
	err = mf_prof_reserve(fd, 0, MF_PAGE_SIZE);
	if (!err)
		err = mf_prof_reserve(fd, MF_HEADER_SIZE, (off_t)size);
	if (!err && fstat(fd, &st))
		err = -errno;
	/* (mapped beyond its end: never touched there before it has grown) */
	/* (with lifetimes, the nodes never move: other threads write to them at any time) */
	size_t reserve = mf_prof_reservation(size);
	if (!err && !(f->header = mf_prof_map(fd, f->reserved = reserve, 0)) &&
	    !(f->header = mf_prof_map(fd, f->reserved = size, 0)))
		err = -errno;
	close(fd);
	if (err) {
		f->header = NULL;
		unlinkat(dir, f->name, 0);
	}
	mf_prof_dir_close(dir);
	if (err)
		return err;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	return 0;
}

int mf_prof_open(struct mf_prof_file *f, pid_t tid)
{
	struct mf_prof_open_call c = {f, tid};
	int err = (int)mf_fds_apart(mf_prof_open_apart, &c);
	if (err)
		return err;
	f->nodes = (struct mf_node *)((char *)f->header + MF_HEADER_SIZE);
	struct mf_prof_header *h = f->header;
	h->version = MF_FORMAT_VERSION;
	h->byte_order = MF_BYTE_ORDER_MARK;
	h->header_size = MF_HEADER_SIZE;
	h->node_size = sizeof(struct mf_node);
	h->max_depth = mf_config.depth;
	h->pid = (uint64_t)getpid();
	h->tid = (uint64_t)tid;
	h->sample_rate = mf_config.sample;
	h->records = mf_config.lifetimes ? MF_RECORD_LIFE : 0;
	h->weight = (uint32_t)mf_config.weight_time;
	h->start_ns = mf_now_ns();
	mf_timeline_start(h);
	prctl(PR_GET_NAME, h->thread_name);
	h->thread_name[MF_THREAD_NAME_LEN - 1] = 0;
	__atomic_store_n(&h->state, MF_STATE_RECORDING, __ATOMIC_RELEASE);
	/* The magic last: a reader meanwhile finds a file still being made (zeros), never a
	 * header with some fields yet to come. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, MF_PROF_MAGIC, sizeof(h->magic));
	return 0;
}

/* Reopens the file by name to reserve the bytes from `from` to `end` (to extend it to twice
 * its nodes, or to fill the header's hole): no descriptor is kept between calls, so a host
 * that closes or dup2()s over every descriptor cannot hurt us, and we never write to one of
 * its. 0 or -errno. */
struct mf_prof_reserve_call {
	struct mf_prof_file *f;
	off_t from, end;
};

static long mf_prof_reserve_apart(void *arg)
{
	struct mf_prof_reserve_call *c = arg;
	struct mf_prof_file *f = c->f;
	int dir = mf_prof_dir_open();
	int fd = dir < 0 ? -1 : openat(dir, f->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	int err = fd < 0 ? -errno : 0;
	mf_prof_dir_close(dir);
	struct stat st;
	if (!err && fstat(fd, &st))
		err = -errno;
	if (!err && (st.st_dev != f->dev || st.st_ino != f->ino))
		err = -ESTALE; /* someone replaced our file: write nothing through that name */
	if (!err)
		err = mf_prof_reserve(fd, c->from, c->end);
	if (fd >= 0)
		close(fd);
	return err;
}

static struct mf_node *mf_prof_grow_file(struct mf_prof_file *f, uint64_t *capacity)
{
	uint64_t cap = f->capacity * 2;
	/* Past what the mapping holds: four times as much (the header moves with it). */
	size_t need = MF_HEADER_SIZE + cap * sizeof(struct mf_node);
	if (need > f->reserved && mf_config.lifetimes) {
		MF_LOG_ONCE("%s reached %zu bytes, as much as a thread's file may hold with "
			    "MALLOC_FREQ_LIFETIMES=1%s; this thread's further new call stacks are "
			    "counted as lost (said once for all threads)",
			    f->path, f->reserved,
			    f->reserved < MF_FILE_RESERVE_LIFE && mf_prof_as_share() <= f->reserved
				? " under this RLIMIT_AS"
				: "");
		return NULL;
	}
	if (need > f->reserved) {
		size_t more = f->reserved * 4 > need ? f->reserved * 4 : need;
		void *p = mremap(f->header, f->reserved, more, MREMAP_MAYMOVE);
		if (p == MAP_FAILED) {
			MF_LOG_ONCE("cannot map more of %s: %s; this thread's further new call "
				    "stacks are counted as lost (said once for all threads)",
				    f->path, strerrordesc_np(errno));
			return NULL;
		}
		f->header = p;
		f->nodes = (struct mf_node *)((char *)p + MF_HEADER_SIZE);
		f->reserved = more;
	}
	f->capacity = cap;
	*capacity = cap;
	return f->nodes;
}

int mf_prof_extend(struct mf_prof_file *f)
{
	if (f->grow_failed)
		return -1;
	struct mf_prof_reserve_call c = {
	    f, MF_HEADER_SIZE, (off_t)(MF_HEADER_SIZE + f->capacity * 2 * sizeof(struct mf_node))};
	int cancel = mf_nocancel_begin();
	int err = (int)mf_fds_apart(mf_prof_reserve_apart, &c);
	mf_nocancel_end(cancel);
	if (err) {
		MF_LOG_ONCE("cannot grow %s: %s; this thread's further new call stacks are counted "
			    "as lost (said once for all threads)",
			    f->path, strerrordesc_np(-err));
		f->grow_failed = 1;
		return -1;
	}
	return 0;
}

struct mf_node *mf_prof_grow(void *file, uint64_t *capacity)
{
	struct mf_prof_file *f = file;
	if (f->grow_failed)
		return NULL;
	int cancel = mf_nocancel_begin();
	struct mf_node *nodes = mf_prof_grow_file(f, capacity);
	mf_nocancel_end(cancel);
	f->grow_failed = nodes == NULL;
	return nodes;
}

int mf_prof_reserve_header(struct mf_prof_file *f)
{
	if (f->header_whole)
		return f->header_whole > 0 ? 0 : -1;
	/* (it reopens the file: a slow step, from the hot path too, whose entry point releases
	 * no hold: taken and released here then, knowing whether the loader's lock is ours) */
	int held = mf_tls.fork_held;
	unsigned loader = mf_tls.loader_held;
	if (!held) {
		mf_tls.loader_held = mf_loader_held((uintptr_t)__builtin_frame_address(0));
		mf_fork_hold();
	}
	struct mf_prof_reserve_call c = {f, MF_HEADER_SIZE_V10, MF_HEADER_SIZE};
	int cancel = mf_nocancel_begin();
	int err = (int)mf_fds_apart(mf_prof_reserve_apart, &c);
	mf_nocancel_end(cancel);
	if (!held) {
		mf_fork_release();
		mf_tls.loader_held = loader;
	}
	if (err)
		MF_LOG_ONCE("cannot reserve the timeline's room in %s: %s; its threads keep %u "
			    "timeline records, not %u (said once for all threads)",
			    f->path, strerrordesc_np(-err),
			    (unsigned)((MF_HEADER_SIZE_V10 - MF_TIMELINE_OFFSET) /
				       sizeof(struct mf_timeline_record)),
			    MF_TIMELINE_RECORDS);
	f->header_whole = err ? -1 : 1;
	return err ? -1 : 0;
}

void mf_prof_close(struct mf_prof_file *f)
{
	/* With lifetimes, a later free of one of its blocks still counts in it: only the room
	 * it was to grow into goes (the nodes stay where they are; threads that ended would keep
	 * their whole reservations otherwise, a 256th of RLIMIT_AS each under one). */
	size_t used = mf_pages_round(MF_HEADER_SIZE + f->capacity * sizeof(struct mf_node));
	if (f->header && !mf_life_on)
		munmap(f->header, f->reserved);
	else if (f->header && f->reserved > used)
		munmap((char *)f->header + used, f->reserved - used);
	f->nodes = NULL;
	f->header = NULL;
}

struct mf_prof_comm_call {
	pid_t tid;
	char *name; /* MF_THREAD_NAME_LEN bytes */
};

static long mf_prof_comm_apart(void *arg)
{
	const struct mf_prof_comm_call *c = arg;
	char path[64];
	mf_format(path, sizeof(path), "/proc/self/task/%d/comm", (int)c->tid);
	ssize_t n = mf_read_head(path, c->name, MF_THREAD_NAME_LEN - 1, NULL);
	if (n >= 0) {
		if (n > 0 && c->name[n - 1] == '\n')
			n--;
		c->name[n] = 0;
	}
	return 0;
}

/* The thread name may have changed since the file was made; another thread's is read from
 * /proc. */
void mf_prof_finalize(struct mf_prof_header *h, uint32_t state, pid_t tid)
{
	if (h->state != MF_STATE_RECORDING)
		return;
	int cancel = mf_nocancel_begin();
	char name[MF_THREAD_NAME_LEN] = "";
	if (tid == gettid()) {
		prctl(PR_GET_NAME, name);
	} else {
		struct mf_prof_comm_call c = {tid, name};
		mf_fds_apart(mf_prof_comm_apart, &c);
	}
	/* A test build's: a file long on its way to its end (t_signals, t_exit_threads). */
#ifdef MF_FAULT_EXIT_SLOW
	nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
#endif
	if (name[0])
		memcpy(h->thread_name, name, sizeof(h->thread_name));
	h->thread_name[MF_THREAD_NAME_LEN - 1] = 0;
	h->end_ns = mf_now_ns();
	__atomic_store_n(&h->state, state, __ATOMIC_RELEASE);
	mf_nocancel_end(cancel);
}
