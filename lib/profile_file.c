/* The process directory malloc_freq.<pid>[.<n>] and the per-thread files <tid>[.<n>].prof:
 * created exclusively (never overwriting, never through a symlink), space reserved with
 * posix_fallocate so a full disk cannot SIGBUS the host, mapped shared, no descriptor kept.
 * Slow path only: no malloc, no stdio. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mf_internal.h"

#define MF_NODES_INITIAL 256
#define MF_SUFFIX_MAX	 100000

static char mf_dir[MF_PATH_LEN];
static pid_t mf_dir_pid; /* the process mf_dir was made for; 0: none yet */
static pthread_mutex_t mf_dir_lock = PTHREAD_MUTEX_INITIALIZER; /* first calls of two threads */

static uint64_t mf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int mf_prof_dir_make(pid_t pid);

int mf_prof_dir_ensure(void)
{
	pid_t pid = getpid();
	if (__atomic_load_n(&mf_dir_pid, __ATOMIC_ACQUIRE) == pid)
		return 0;
	pthread_mutex_lock(&mf_dir_lock);
	int r = mf_dir_pid == pid ? 0 : mf_prof_dir_make(pid);
	pthread_mutex_unlock(&mf_dir_lock);
	return r;
}

static int mf_prof_dir_make(pid_t pid)
{
	static char path[MF_PATH_LEN]; /* under mf_dir_lock: off the caller's stack */
	for (unsigned n = 0; n < MF_SUFFIX_MAX; n++) {
		if (n == 0)
			mf_format(path, sizeof(path), "%s/malloc_freq.%d", mf_config.dir, (int)pid);
		else
			mf_format(path, sizeof(path), "%s/malloc_freq.%d.%u", mf_config.dir,
				  (int)pid, n);
		if (mkdir(path, 0755) == 0) {
			memcpy(mf_dir, path, sizeof(mf_dir));
			__atomic_store_n(&mf_dir_pid, pid, __ATOMIC_RELEASE);
			mf_modules_write();
			mf_process_created(path, pid, n);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	int err = errno;
	mf_log("cannot create a profile directory in %s: %s; not recording", mf_config.dir,
	       strerrordesc_np(err));
	return -err;
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
	mf_dir_pid = 0;
	pthread_mutex_init(&mf_dir_lock, NULL); /* in a forked child: whatever its state was */
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

static int mf_prof_reserve(int fd, off_t size)
{
	int err = mf_prof_size_allowed(size);
	if (err)
		return err;
	err = posix_fallocate(fd, 0, size);
	/* Filesystems without fallocate: glibc emulates it; EOPNOTSUPP only from odd ones, where
	 * ftruncate is the best left (a full disk may then fault). */
	if (err == EOPNOTSUPP)
		err = ftruncate(fd, size) ? errno : 0;
	return -err;
}

static void *mf_prof_map(int fd, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	return p == MAP_FAILED ? NULL : p;
}

int mf_prof_open(struct mf_prof_file *f, pid_t tid)
{
	int fd = -1, err;
	for (unsigned n = 0; n < MF_SUFFIX_MAX && fd < 0; n++) {
		if (n == 0)
			mf_format(f->path, sizeof(f->path), "%s/%d.prof", mf_dir, (int)tid);
		else
			mf_format(f->path, sizeof(f->path), "%s/%d.%u.prof", mf_dir, (int)tid, n);
		fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	f->capacity = MF_NODES_INITIAL;
	struct stat st;
	err = mf_prof_reserve(fd, MF_HEADER_SIZE + f->capacity * sizeof(struct mf_node));
	if (!err && fstat(fd, &st))
		err = -errno;
	if (!err && !(f->header = mf_prof_map(fd, MF_HEADER_SIZE, 0)))
		err = -errno;
	if (!err &&
	    !(f->nodes = mf_prof_map(fd, f->capacity * sizeof(struct mf_node), MF_HEADER_SIZE)))
		err = -errno;
	close(fd);
	if (err) {
		if (f->header)
			munmap(f->header, MF_HEADER_SIZE);
		f->header = NULL;
		unlink(f->path);
		return err;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	struct mf_prof_header *h = f->header;
	memcpy(h->magic, MF_PROF_MAGIC, sizeof(h->magic));
	h->version = MF_FORMAT_VERSION;
	h->byte_order = MF_BYTE_ORDER_MARK;
	h->header_size = MF_HEADER_SIZE;
	h->node_size = sizeof(struct mf_node);
	h->max_depth = mf_config.depth;
	h->pid = (uint64_t)getpid();
	h->tid = (uint64_t)tid;
	h->sample_rate = mf_config.sample;
	h->start_ns = mf_now_ns();
	prctl(PR_GET_NAME, h->thread_name);
	h->thread_name[MF_THREAD_NAME_LEN - 1] = 0;
	__atomic_store_n(&h->state, MF_STATE_RECORDING, __ATOMIC_RELEASE);
	return 0;
}

/* Reopens the file by name to extend it: no descriptor is kept between calls, so a host that
 * closes or dup2()s over every descriptor cannot hurt us, and we never write to one of its. */
static struct mf_node *mf_prof_grow_file(struct mf_prof_file *f, uint64_t *capacity)
{
	uint64_t cap = f->capacity * 2;
	int fd = open(f->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	int err = fstat(fd, &st) ? -errno : 0;
	if (!err && (st.st_dev != f->dev || st.st_ino != f->ino))
		err = -ESTALE; /* someone replaced our file: write nothing through that name */
	if (!err)
		err = mf_prof_reserve(fd, MF_HEADER_SIZE + cap * sizeof(struct mf_node));
	close(fd);
	if (err) {
		MF_LOG_ONCE("cannot grow %s: %s; this thread's further new call stacks are counted "
			    "as lost (said once for all threads)",
			    f->path, strerrordesc_np(-err));
		return NULL;
	}
	void *p = mremap(f->nodes, f->capacity * sizeof(struct mf_node),
			 cap * sizeof(struct mf_node), MREMAP_MAYMOVE);
	if (p == MAP_FAILED) {
		MF_LOG_ONCE("cannot map more of %s: %s; this thread's further new call stacks are "
			    "counted as lost (said once for all threads)",
			    f->path, strerrordesc_np(errno));
		return NULL;
	}
	f->nodes = p;
	f->capacity = cap;
	*capacity = cap;
	return p;
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

void mf_prof_close(struct mf_prof_file *f)
{
	if (f->nodes)
		munmap(f->nodes, f->capacity * sizeof(struct mf_node));
	if (f->header)
		munmap(f->header, MF_HEADER_SIZE);
	f->nodes = NULL;
	f->header = NULL;
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
		char path[64];
		mf_format(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, name, sizeof(name) - 1);
			close(fd);
			if (n > 0 && name[n - 1] == '\n')
				n--;
			name[n > 0 ? n : 0] = 0;
		}
	}
	if (name[0])
		memcpy(h->thread_name, name, sizeof(h->thread_name));
	h->thread_name[MF_THREAD_NAME_LEN - 1] = 0;
	h->end_ns = mf_now_ns();
	__atomic_store_n(&h->state, state, __ATOMIC_RELEASE);
	mf_nocancel_end(cancel);
}
