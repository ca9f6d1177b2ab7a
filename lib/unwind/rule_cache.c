/* The rule cache: frame rules libunwind confirmed in earlier runs of the same program, so that a
 * run need not ask it again, and need not even load it when the last run needed nothing more
 * (at a short process's start, loading and asking are most of the profiler's cost). One file
 * per program, named by its main executable's build-id, read at start and rewritten (whole,
 * then renamed into place) at exit when this run confirmed new rules or needs changed. A key
 * stands for (module build-id, offset, the rule read from the module's .eh_frame): the rule is
 * still read from the binary in every run, and a key found only spares the confirmation, so a
 * damaged or forged file can at worst leave a rule unconfirmed, never make one up. Lookups and
 * adds run inside malloc: no malloc, no locks; files are touched only at start and at exit. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/internal.h"

enum {
	MF_RULES_NEW_SLOTS = 1 << 16
}; /* a set of the keys this run adds; when it is half
      full, more are confirmed again in the next run */

static char mf_rules_path[MF_PATH_LEN]; /* empty: no cache */
static const uint64_t *mf_rules_keys;	/* the file's, ascending */
static uint64_t mf_rules_count;
static uint32_t mf_rules_flags_read;
static int mf_rules_need;      /* this run needed libunwind where it was not loaded */
static uint64_t *mf_rules_new; /* open addressing; 0: free */
static unsigned mf_rules_new_count;

static uint64_t mf_rules_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull; /* splitmix64's finalizer */
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

uint64_t mf_rules_key(uint64_t module, uint64_t rel_pc, uint64_t rule)
{
	uint64_t h = mf_rules_mix(mf_rules_mix(module, rel_pc), rule);
	return h ? h : 1;
}

/* Which profiler and libunwind confirmed a file's keys. */
static uint64_t mf_rules_origin(void)
{
	static const char who[] = PACKAGE_VERSION " " MF_LIBUNWIND_SONAME;
	uint64_t h = MF_RULES_VERSION;
	for (const char *c = who; *c; c++)
		h = mf_rules_mix(h, (unsigned char)*c);
	return h;
}

int mf_rules_on(void)
{
	return mf_rules_new != NULL;
}

int mf_rules_complete(void)
{
	return mf_rules_count && (mf_rules_flags_read & MF_RULES_COMPLETE);
}

void mf_rules_needed(void)
{
	mf_rules_need = 1;
}

int mf_rules_known(uint64_t key)
{
	uint64_t lo = 0, hi = mf_rules_count;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (mf_rules_keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < mf_rules_count && mf_rules_keys[lo] == key;
}

void mf_rules_add(uint64_t key)
{
	if (!mf_rules_new ||
	    __atomic_load_n(&mf_rules_new_count, __ATOMIC_RELAXED) >= MF_RULES_NEW_SLOTS / 2) {
		mf_rules_need = 1; /* full enough: the rest are confirmed again next time */
		return;
	}
	/* a set: every dlclose has the rules confirmed again, and they come back */
	for (uint64_t i = key;; i++) {
		uint64_t *slot = &mf_rules_new[i & (MF_RULES_NEW_SLOTS - 1)], have = 0;
		if (__atomic_compare_exchange_n(slot, &have, key, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_add_fetch(&mf_rules_new_count, 1, __ATOMIC_RELAXED);
			return;
		}
		if (have == key)
			return;
	}
}

/* Why a file's bytes are not a usable rule cache, or NULL if they are one. *stale: it is one,
 * but of another profiler or libunwind (not worth a word). */
static const char *mf_rules_invalid(const unsigned char *buf, size_t size, int *stale)
{
	const struct mf_rules_header *h = (const void *)buf;
	if (size < sizeof(*h) || memcmp(h->magic, MF_RULES_MAGIC, 8))
		return "not a rule cache";
	if (h->version != MF_RULES_VERSION || h->byte_order != MF_BYTE_ORDER_MARK ||
	    h->origin != mf_rules_origin())
		return *stale = 1, "of another version";
	if (h->count > MF_RULES_MAX || size != sizeof(*h) + h->count * 8)
		return "its size does not match its key count";
	const uint64_t *keys = (const void *)(buf + sizeof(*h));
	for (uint64_t i = 0; i < h->count; i++)
		if (!keys[i] || (i && keys[i] <= keys[i - 1]))
			return "its keys are out of order";
	if (mf_rules_check(keys, h->count) != h->check)
		return "its checksum does not match";
	return NULL;
}

/* Reads the cache file into fresh memory: its keys (ascending), their count and its flags,
 * all 0 when there is no file. Returns why the file was refused, or NULL. (Read, not mapped:
 * a file cut short under a mapping would end in SIGBUS.) */
static const char *mf_rules_read(const uint64_t **keys, uint64_t *count, uint32_t *flags)
{
	*keys = NULL;
	*count = 0;
	*flags = 0;
	/* (not a FIFO's writer to wait for, nor a link to follow) */
	int fd = open(mf_rules_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return errno == ELOOP ? "a symbolic link" : NULL; /* none yet: as if empty */
	struct stat st;
	size_t size = 0, got = 0;
	unsigned char *buf = NULL;
	const char *bad = NULL;
	int stale = 0;
	if (fstat(fd, &st))
		bad = "cannot be read";
	else if (!S_ISREG(st.st_mode))
		bad = "not a regular file";
	else if (st.st_size > (off_t)(sizeof(struct mf_rules_header) + 8ull * MF_RULES_MAX))
		bad = "too large";
	else if (!(size = (size_t)st.st_size))
		bad = "empty";
	else if (!(buf = mf_pages_new(size)))
		bad = "out of memory";
	while (!bad && got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			bad = "cannot be read";
		else
			got += (size_t)n;
	}
	close(fd);
	if (!bad && !(bad = mf_rules_invalid(buf, size, &stale))) {
		const struct mf_rules_header *h = (const void *)buf;
		*keys = (const uint64_t *)(buf + sizeof(*h));
		*count = h->count;
		*flags = h->flags;
	} else if (buf) {
		munmap(buf, size);
	}
	return stale ? NULL : bad;
}

static void mf_rules_free(const uint64_t *keys, uint64_t count)
{
	if (keys)
		munmap((unsigned char *)keys - sizeof(struct mf_rules_header),
		       sizeof(struct mf_rules_header) + count * 8);
}

static long mf_rules_read_apart(void *unused)
{
	(void)unused;
	const char *bad = mf_rules_read(&mf_rules_keys, &mf_rules_count, &mf_rules_flags_read);
	if (bad)
		mf_log("rule cache %s: %s; not used, and replaced at exit if it can be",
		       mf_rules_path, bad);
	return 0;
}

void mf_rules_init(void)
{
	char id[2 * MF_BUILD_ID_LEN + 1];
	if (!mf_config.cache[0] || mf_config.unwind == MF_UNWIND_LIBUNWIND ||
	    mf_modules_main_build_id(id))
		return;
	mf_format(mf_rules_path, sizeof(mf_rules_path), "%s/%s.rules", mf_config.cache, id);
	mf_fds_apart(mf_rules_read_apart, NULL);
	void *p = mmap(NULL, MF_RULES_NEW_SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	mf_rules_new = p == MAP_FAILED ? NULL : p;
}

/* Heapsort: qsort may allocate. */
static void mf_rules_sort(uint64_t *a, size_t n)
{
	for (size_t end = n, start = n / 2;;) {
		if (start > 0) {
			start--;
		} else {
			if (end <= 1)
				return;
			uint64_t t = a[0];
			a[0] = a[--end];
			a[end] = t;
		}
		for (size_t root = start, child; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && a[child] < a[child + 1])
				child++;
			if (a[root] >= a[child])
				break;
			uint64_t t = a[root];
			a[root] = a[child];
			a[child] = t;
		}
	}
}

/* Creates the cache directory, and its parent (~/.cache) if that is missing too. */
static void mf_rules_mkdir(void)
{
	if (mkdir(mf_config.cache, 0700) == 0 || errno != ENOENT)
		return;
	char parent[MF_PATH_LEN];
	strcpy(parent, mf_config.cache);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = 0;
		mkdir(parent, 0700);
		mkdir(mf_config.cache, 0700);
	}
}

/* Writes buf[0..len) to a new file of this process beside the cache and renames it into place.
 * Not past RLIMIT_FSIZE: the kernel would answer with SIGXFSZ, and a program that lowered it
 * before returning from main would be killed at exit by a cache it never asked for. */
static void mf_rules_replace(const unsigned char *buf, size_t len)
{
	char tmp[MF_PATH_LEN + 32];
	if (mf_prof_size_allowed((off_t)len))
		return;
	mf_format(tmp, sizeof(tmp), "%s.%d", mf_rules_path, (int)getpid());
	mf_rules_mkdir();
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return; /* (one left by a run of this pid that died: not ours to remove) */
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (close(fd) | (done < len) || rename(tmp, mf_rules_path))
		unlink(tmp);
}

/* At exit: the file's keys (as it is now: another run may have saved since start) and this
 * run's new ones, and whether this run needed libunwind beyond them. Best effort: a cache
 * that cannot be written is only slower next time. */
static long mf_rules_save_apart(void *unused)
{
	(void)unused;
	const uint64_t *set = mf_rules_new;
	if (!set)
		return 0;
	unsigned n = __atomic_load_n(&mf_rules_new_count, __ATOMIC_RELAXED);
	uint32_t flags = mf_rules_need ? 0 : MF_RULES_COMPLETE;
	if (!n && flags == mf_rules_flags_read)
		return 0; /* nothing to say */
	const uint64_t *old;
	uint64_t have, old_count;
	uint32_t old_flags;
	if (mf_rules_read(&old, &have, &old_flags))
		have = 0;
	old_count = have + n > MF_RULES_MAX ? 0 : have; /* full: start over with this run's */
	size_t size = sizeof(struct mf_rules_header) + (old_count + n) * 8;
	unsigned char *buf = mf_pages_new(size);
	if (!buf) {
		mf_rules_free(old, have);
		return 0;
	}
	/* The new keys gathered and sorted at the end of the array, merged forwards into its
	 * start: the merge never writes past what it has read. Repeats go. */
	uint64_t *keys = (uint64_t *)(buf + sizeof(struct mf_rules_header));
	uint64_t *fresh = keys + old_count, last = 0;
	size_t k = 0;
	for (size_t i = 0; i < MF_RULES_NEW_SLOTS && k < n; i++)
		if (set[i])
			fresh[k++] = set[i];
	n = (unsigned)k;
	mf_rules_sort(fresh, n);
	size_t i = 0, j = 0, count = 0, added = 0;
	while (i < old_count || j < n) {
		int from_old = j == n || (i < old_count && old[i] <= fresh[j]);
		uint64_t key = from_old ? old[i++] : fresh[j++];
		if (key != last) {
			keys[count++] = last = key;
			added += !from_old;
		}
	}
	mf_rules_free(old, have);
	struct mf_rules_header *h = (struct mf_rules_header *)buf;
	memcpy(h->magic, MF_RULES_MAGIC, 8);
	h->version = MF_RULES_VERSION;
	h->byte_order = MF_BYTE_ORDER_MARK;
	h->count = count;
	h->check = mf_rules_check(keys, count);
	h->origin = mf_rules_origin();
	h->flags = flags;
	if (count && (added || flags != old_flags))
		mf_rules_replace(buf, sizeof(*h) + count * 8);
	munmap(buf, size);
	return 0;
}

void mf_rules_save(void)
{
	mf_fds_apart(mf_rules_save_apart, NULL);
}
