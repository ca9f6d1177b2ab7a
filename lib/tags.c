/* Tag scopes: the process's table of tag names (an id each, in the order first pushed) and
 * the process directory's `tags` file that names them for mf_print (malloc_freq_format.h).
 * Interning runs in the program's threads, outside malloc; the file is written from the slow
 * path, in a descriptor table of its own. No malloc, no stdio, errno kept. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "mf_internal.h"

static pthread_mutex_t mf_tags_lock = PTHREAD_MUTEX_INITIALIZER;
static char mf_tag_names[MF_TAGS_MAX][MF_TAG_NAME_LEN];
static unsigned mf_tags_count; /* names in the table; read without the lock by mf_tags_sync */
/* An open-addressed index of the names: id + 1, 0 for an empty slot. */
static uint16_t mf_tags_index[2 * 4096];
static unsigned mf_tags_written; /* names in the directory's file, of process mf_tags_pid */
static pid_t mf_tags_pid;

static uint64_t mf_tags_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The id of cut in the index from slot i on, or -1 (and *i the empty slot that ends it). */
static int mf_tags_find(const char *cut, uint64_t *i)
{
	const uint64_t mask = sizeof(mf_tags_index) / sizeof(mf_tags_index[0]) - 1;
	for (;; *i = (*i + 1) & mask) {
		unsigned x = __atomic_load_n(&mf_tags_index[*i], __ATOMIC_ACQUIRE);
		if (!x)
			return -1;
		if (!strcmp(mf_tag_names[x - 1], cut))
			return (int)x - 1;
	}
}

/* A name seen before is found without a lock (a slot is set once, after its name); a new one
 * is added under the lock, with signals blocked: a handler's allocation may write the file,
 * which takes the lock too. */
unsigned mf_tags_intern(const char *name)
{
	char cut[MF_TAG_NAME_LEN];
	size_t len = strnlen(name ? name : "", MF_TAG_NAME_LEN - 1);
	memcpy(cut, name ? name : "", len);
	cut[len] = 0;
	const uint64_t mask = sizeof(mf_tags_index) / sizeof(mf_tags_index[0]) - 1;
	uint64_t first = mf_tags_hash(cut) & mask, i = first;
	int id = mf_tags_find(cut, &i);
	if (id >= 0)
		return (unsigned)id;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&mf_tags_lock);
	i = first;
	if ((id = mf_tags_find(cut, &i)) < 0) {
		if (mf_tags_count < MF_TAGS_MAX - 1) {
			id = (int)mf_tags_count;
			memcpy(mf_tag_names[id], cut, len + 1);
			__atomic_store_n(&mf_tags_index[i], (uint16_t)(id + 1), __ATOMIC_RELEASE);
			__atomic_store_n(&mf_tags_count, (unsigned)id + 1, __ATOMIC_RELEASE);
		} else { /* full: every other name is recorded as the last one, "..." */
			id = MF_TAGS_MAX - 1;
			if (mf_tags_count < MF_TAGS_MAX) {
				memcpy(mf_tag_names[id], "...", 4);
				__atomic_store_n(&mf_tags_count, MF_TAGS_MAX, __ATOMIC_RELEASE);
			}
		}
	}
	pthread_mutex_unlock(&mf_tags_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return (unsigned)id;
}

static long mf_tags_write_apart(void *arg)
{
	unsigned from = *(unsigned *)arg, count = __atomic_load_n(&mf_tags_count, __ATOMIC_ACQUIRE);
	int dir = mf_prof_dir_open();
	if (dir < 0)
		return dir;
	int fd =
	    openat(dir, "tags", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mf_config.file_mode);
	int err = fd < 0 ? -errno : 0;
	mf_prof_dir_close(dir);
	if (err)
		return err;
	struct mf_tags_header h = {.version = MF_FORMAT_VERSION,
				   .byte_order = MF_BYTE_ORDER_MARK,
				   .count = count,
				   .name_len = MF_TAG_NAME_LEN};
	memcpy(h.magic, MF_TAGS_MAGIC, sizeof(h.magic));
	size_t len = (size_t)(count - from) * MF_TAG_NAME_LEN;
	off_t at = (off_t)(sizeof(h) + (size_t)from * MF_TAG_NAME_LEN);
	if (mf_prof_size_allowed(at + (off_t)len) ||
	    pwrite(fd, mf_tag_names[from], len, at) != (ssize_t)len ||
	    pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) /* (the count after the names) */
		err = -EIO;
	close(fd);
	return err ? err : (long)count;
}

int mf_tags_sync(void)
{
	pid_t pid = getpid();
	if (mf_tags_pid != pid) /* (a forked child's directory has no file yet) */
		mf_tags_pid = pid, mf_tags_written = 0;
	if (mf_tags_written == __atomic_load_n(&mf_tags_count, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&mf_tags_lock); /* (one writer; names are only added meanwhile) */
	unsigned from = mf_tags_written;
	long r = mf_fds_apart(mf_tags_write_apart, &from);
	if (r > 0)
		mf_tags_written = (unsigned)r;
	pthread_mutex_unlock(&mf_tags_lock);
	return r < 0 ? (int)r : 0;
}
