/* Packing ended threads' files (malloc_freq_format.h, version 12): at a snapshot, each file of
 * a thread that ended without lifetimes is appended to the process directory's ended.pack, the
 * write checked, and only then the file removed; so a long run of short threads with interval
 * snapshots keeps one file for them, not one per thread that every snapshot names again. A
 * failed step leaves the file and cuts the pack back (unless the failed removal removed it):
 * no record is ever written behind a bad one. Runs in the snapshot's descriptor task under its
 * lock, the pack's only writer: thread exit does nothing of this. No malloc, no stdio. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mf_internal.h"

static pid_t mf_pack_pid;     /* the process the two below are of (a forked child has its own) */
static uint64_t mf_pack_good; /* the pack's length: its records end there */
static int mf_pack_stuck;     /* a failed write could not be cut off: nothing more is packed */
static _Alignas(8) unsigned char mf_pack_image[MF_PACK_IMAGE_MAX]; /* the record being written */

static void mf_pack_own(pid_t pid)
{
	if (mf_pack_pid != pid)
		mf_pack_pid = pid, mf_pack_good = 0, mf_pack_stuck = 0;
}

uint64_t mf_pack_length(pid_t pid)
{
	mf_pack_own(pid);
	return mf_pack_good;
}

/* The pack in dir cut back to its last good record after a failed append; if that fails, the
 * pack is left as it is and nothing more is appended in this process (said once). */
static void mf_pack_cut(int dir)
{
	int fd = openat(dir, MF_PACK_NAME, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	int err = fd < 0 || ftruncate(fd, (off_t)mf_pack_good) ? errno : 0;
	if (fd >= 0 && close(fd) && !err)
		err = errno;
	if (err == ENOENT && !mf_pack_good)
		err = 0; /* (nothing was made) */
	if (!err)
		return;
	mf_pack_stuck = 1;
	MF_LOG_ONCE("cannot cut %s/%s back to %llu bytes after a failed write: %s; no more ended "
		    "threads' files are packed in this process, they stay as they are (said once)",
		    mf_prof_dir(), MF_PACK_NAME, (unsigned long long)mf_pack_good,
		    strerrordesc_np(err));
}

/* The record of file fd (name; h: its header, MF_HEADER_SIZE bytes) built in mf_pack_image:
 * its length, or 0 if it is not one to pack (or cannot be read whole). */
static size_t mf_pack_build(int fd, const char *name, const struct mf_prof_header *h)
{
	size_t len = strlen(name);
	uint32_t records =
	    h->timeline_count < MF_TIMELINE_RECORDS ? h->timeline_count : MF_TIMELINE_RECORDS;
	size_t header_len = MF_TIMELINE_OFFSET + records * sizeof(struct mf_timeline_record);
	struct mf_pack_record *rec = (struct mf_pack_record *)mf_pack_image;
	struct stat st;
	if (h->state != MF_STATE_THREAD_EXIT || (h->records & MF_RECORD_LIFE) ||
	    len >= MF_PACK_NAME_LEN || h->node_count > MF_PACK_IMAGE_MAX / sizeof(struct mf_node))
		return 0;
	size_t nodes_len = h->node_count * sizeof(struct mf_node);
	size_t total = sizeof(*rec) + header_len + nodes_len;
	if (total > MF_PACK_IMAGE_MAX || fstat(fd, &st) ||
	    st.st_size < (off_t)(MF_HEADER_SIZE + nodes_len))
		return 0; /* (a large file stays; one cut short is read as it is) */
	unsigned char *nodes = mf_pack_image + sizeof(*rec) + header_len;
	if (nodes_len && pread(fd, nodes, nodes_len, MF_HEADER_SIZE) != (ssize_t)nodes_len)
		return 0;
	memset(rec, 0, sizeof(*rec));
	memcpy(rec->magic, MF_PACK_MAGIC, sizeof(rec->magic));
	rec->version = MF_FORMAT_VERSION;
	rec->byte_order = MF_BYTE_ORDER_MARK;
	rec->record_size = sizeof(*rec);
	rec->header_len = header_len;
	rec->nodes_len = nodes_len;
	memcpy(rec->name, name, len);
	memcpy(mf_pack_image + sizeof(*rec), h, header_len);
	rec->check = mf_hash_words(1, mf_pack_image, total);
	return total;
}

int mf_pack_file(int dir, int fd, const char *name, const struct mf_prof_header *h, pid_t pid)
{
	mf_pack_own(pid);
	size_t total = mf_pack_stuck ? 0 : mf_pack_build(fd, name, h);
	if (!total)
		return 0;
	int err = mf_prof_size_allowed((off_t)(mf_pack_good + total));
	int pk = err ? -1
		     : openat(dir, MF_PACK_NAME, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			      mf_config.file_mode);
	if (!err && pk < 0)
		err = -errno;
	struct stat st;
	if (!err && !fstat(pk, &st) && (uint64_t)st.st_size != mf_pack_good) {
		/* (removed or replaced meanwhile: a write at the length it had would leave a hole,
		 * or write into another's records) */
		close(pk);
		mf_pack_stuck = 1;
		MF_LOG_ONCE("%s/%s is %llu bytes, not the %llu written to it: removed or replaced "
			    "while the process runs; no more ended threads' files are packed in "
			    "this process, they stay as they are (said once)",
			    mf_prof_dir(), MF_PACK_NAME, (unsigned long long)st.st_size,
			    (unsigned long long)mf_pack_good);
		return 0;
	}
	if (!err) {
		ssize_t n = pwrite(pk, mf_pack_image, total, (off_t)mf_pack_good);
		if (n != (ssize_t)total)
			err = n < 0 ? -errno : -ENOSPC;
	}
	/* (a network file system says only here that the write did not reach the disk) */
	if (pk >= 0 && close(pk) && !err)
		err = -errno;
	if (!err && unlinkat(dir, name, 0) && errno != ENOENT) {
		/* (a network file system may fail a removal it made: the name gone, the record is
		 * the thread's. If that cannot be told, the record stays, and the file too if it
		 * is there: a reader takes the thread once from the two) */
		err = -errno;
		int left = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
		if (left == ENOENT)
			err = 0;
		else if (left) {
			mf_pack_good += total;
			return 2;
		}
	}
	if (err) {
		if (pk >= 0)
			mf_pack_cut(dir);
		return err;
	}
	mf_pack_good += total;
	return 1;
}
