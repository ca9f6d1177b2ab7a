/* The rule cache: frame rules libunwind confirmed in earlier runs of the same program, so that a
 * run need not read them from .eh_frame nor ask libunwind again, and need not even load it
 * when the last run needed nothing more (at a short process's start, loading and asking are
 * most of the profiler's cost; in a compiler, reading long CFA programs was a quarter of it).
 * One file per program, named by its main executable's build-id, read at start and rewritten
 * (whole, then renamed into place) at exit when this run confirmed new rules or needs changed.
 * An entry is (module build-id and offset: the key, the rule). The file is the user's own: one
 * whose checksum or rules are not right, or that another user owns, is not used (and is
 * replaced), so a rule comes from the binary, from libunwind, or from this user's
 * earlier run. Lookups and adds run inside malloc: no malloc, no locks; files are touched
 * only at start and at exit. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename */
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/internal.h"

enum {
	MF_RULES_NEW_SLOTS = 1 << 16
}; /* a set of the rules this run adds; when it is half
      full, more are confirmed again in the next run */

static char mf_rules_path[MF_PATH_LEN];		    /* empty: no cache */
static const struct mf_rules_entry *mf_rules_found; /* the file's, ascending */
static uint64_t mf_rules_count;
static uint32_t mf_rules_flags_read;
static int mf_rules_need;		    /* this run needed libunwind where it was not loaded */
static struct mf_rules_entry *mf_rules_new; /* open addressing by key; key 0: free */
static unsigned mf_rules_new_count;

static uint64_t mf_rules_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull; /* splitmix64's finalizer */
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

uint64_t mf_rules_key(uint64_t module, uint64_t rel_pc)
{
	uint64_t h = mf_rules_mix(module, rel_pc);
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

/* The file's keys are hashes, spread evenly over 64 bits: key lies about key / 2^64 of the
 * way along them, give or take the square root of their count. So its place is looked for
 * around there, in a window widened (one cache line first, then twice as far each time) until
 * it holds that place, then halved: reads of neighbouring lines, where a search of the whole
 * file read a line for each of its levels, far apart (and cc1 learns 6,100 return addresses a
 * run from its cache). */
uint64_t mf_rules_known(uint64_t key)
{
	const uint64_t n = mf_rules_count;
	const uint64_t guess = (uint64_t)(((unsigned __int128)key * n) >> 64);
	uint64_t lo = guess, hi = guess, step = 4;
	/* Below lo every key is less than key (or lo is 0); from hi on, none is (or hi is n). */
	while (lo > 0 && mf_rules_found[lo - 1].key >= key) {
		lo = lo > step ? lo - step : 0;
		step *= 2;
	}
	for (step = 4; hi < n && mf_rules_found[hi].key < key; step *= 2)
		hi = n - hi > step ? hi + step : n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (mf_rules_found[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < mf_rules_count && mf_rules_found[lo].key == key ? mf_rules_found[lo].rule : 0;
}

void mf_rules_add(uint64_t key, uint64_t rule)
{
	if (!mf_rules_new ||
	    __atomic_load_n(&mf_rules_new_count, __ATOMIC_RELAXED) >= MF_RULES_NEW_SLOTS / 2) {
		mf_rules_need = 1; /* full enough: the rest are confirmed again next time */
		return;
	}
	/* a set: every dlclose has the rules confirmed again, and they come back. (A key taken,
	 * its rule comes after: the saver leaves out an entry whose rule is not there yet.) */
	for (uint64_t i = key;; i++) {
		struct mf_rules_entry *slot = &mf_rules_new[i & (MF_RULES_NEW_SLOTS - 1)];
		uint64_t have = 0;
		if (__atomic_compare_exchange_n(&slot->key, &have, key, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&slot->rule, rule, __ATOMIC_RELEASE);
			__atomic_add_fetch(&mf_rules_new_count, 1, __ATOMIC_RELAXED);
			return;
		}
		if (have == key)
			return;
	}
}

/* A rule a cache may hold: a step or an end, without an epoch. */
static int mf_rules_plausible(uint64_t w)
{
	unsigned kind = mf_rule_kind(w);
	return mf_rule_epoch(w) == 0 && (kind == MF_CFI_STEP || kind == MF_CFI_END);
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
	if (h->count > MF_RULES_MAX ||
	    size != sizeof(*h) + h->count * sizeof(struct mf_rules_entry))
		return "its size does not match its entry count";
	const struct mf_rules_entry *e = (const void *)(buf + sizeof(*h));
	for (uint64_t i = 0; i < h->count; i++)
		if (!e[i].key || (i && e[i].key <= e[i - 1].key))
			return "its keys are out of order";
	if (mf_rules_check(e, h->count, h->flags, h->reserved) != h->check)
		return "its checksum does not match";
	for (uint64_t i = 0; i < h->count; i++)
		if (!mf_rules_plausible(e[i].rule))
			return "it holds a rule that is none";
	return NULL;
}

/* A file another user owns: its rules would be that user's word. Not used, and replaced as a
 * damaged one, but not named (a program run with sudo, whose HOME is still the user's, meets
 * the user's). */
static const char mf_rules_foreign[] = "owned by another user";

/* Reads the cache file into fresh memory: its entries (ascending), their count and its flags,
 * all 0 when there is no file. Returns why the file was refused, or NULL. (Read, not mapped:
 * a file cut short under a mapping would end in SIGBUS.) */
static const char *mf_rules_read(const struct mf_rules_entry **entries, uint64_t *count,
				 uint32_t *flags, int refresh)
{
	*entries = NULL;
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
	else if (st.st_uid != geteuid())
		bad = mf_rules_foreign;
	else if (st.st_size > (off_t)(sizeof(struct mf_rules_header) +
				      sizeof(struct mf_rules_entry) * (uint64_t)MF_RULES_MAX))
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
	/* (used: its time, renewed once a day, keeps it from mf_rules_prune) */
	if (!bad && refresh && st.st_mtim.tv_sec + 86400 < time(NULL))
		futimens(fd, NULL);
	close(fd);
	if (!bad && !(bad = mf_rules_invalid(buf, size, &stale))) {
		const struct mf_rules_header *h = (const void *)buf;
		*entries = (const struct mf_rules_entry *)(buf + sizeof(*h));
		*count = h->count;
		*flags = h->flags;
	} else if (buf) {
		munmap(buf, size);
	}
	return stale ? NULL : bad;
}

static void mf_rules_free(const struct mf_rules_entry *entries, uint64_t count)
{
	if (entries)
		munmap((unsigned char *)entries - sizeof(struct mf_rules_header),
		       sizeof(struct mf_rules_header) + count * sizeof(*entries));
}

static int mf_rules_damaged; /* the file was refused at start: replaced at exit, rules or none */

static long mf_rules_read_apart(void *unused)
{
	(void)unused;
	const char *bad = mf_rules_read(&mf_rules_found, &mf_rules_count, &mf_rules_flags_read, 1);
	mf_rules_damaged = bad != NULL;
	if (bad && bad != mf_rules_foreign)
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
	void *p = mmap(NULL, MF_RULES_NEW_SLOTS * sizeof(struct mf_rules_entry),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	mf_rules_new = p == MAP_FAILED ? NULL : p;
}

/* Heapsort by key: qsort may allocate. */
static void mf_rules_sort(struct mf_rules_entry *a, size_t n)
{
	for (size_t end = n, start = n / 2;;) {
		if (start > 0) {
			start--;
		} else {
			if (end <= 1)
				return;
			struct mf_rules_entry t = a[0];
			a[0] = a[--end];
			a[end] = t;
		}
		for (size_t root = start, child; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && a[child].key < a[child + 1].key)
				child++;
			if (a[root].key >= a[child].key)
				break;
			struct mf_rules_entry t = a[root];
			a[root] = a[child];
			a[child] = t;
		}
	}
}

/* Makes directory dir (mode 0700) if the directory it goes in is this user's: a run as root
 * with a user's HOME (su, sudo -E) makes no directory of root's in the user's home, where the
 * user could not use it (~/.cache is every program's). 0, or -1 with errno. */
static int mf_rules_mkdir_own(char *dir)
{
	char *slash = strrchr(dir, '/');
	struct stat st;
	if (!slash || slash == dir)
		return mkdir(dir, 0700);
	*slash = 0;
	int theirs = stat(dir, &st) == 0 && st.st_uid != geteuid();
	*slash = '/';
	if (theirs) {
		errno = EACCES;
		return -1;
	}
	return mkdir(dir, 0700);
}

/* Creates the cache directory, and its parent (~/.cache) if that is missing too. */
static void mf_rules_mkdir(void)
{
	char dir[MF_PATH_LEN];
	strcpy(dir, mf_config.cache);
	if (mf_rules_mkdir_own(dir) == 0 || errno != ENOENT)
		return;
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		int made = mf_rules_mkdir_own(dir) == 0;
		*slash = '/';
		if (made)
			mf_rules_mkdir_own(dir);
	}
}

/* A lock on the cache directory, held while a run merges its rules into a file: another
 * run's merge between this one's read and its rename would be lost. Tried for 2 s at most (a
 * merge takes milliseconds; many runs ending at once on a loaded machine wait their turns),
 * then the run saves without it: a descriptor, or -1. */
static int mf_rules_lock(void)
{
	int fd = open(mf_config.cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; fd >= 0 && i < 2000; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK)
			break;
		nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Writes buf[0..len) to a new file of this process beside the cache and renames it into place.
 * Not past RLIMIT_FSIZE: the kernel would answer with SIGXFSZ, and a program that lowered it
 * before returning from main would be killed at exit by a cache it never asked for. */
static void mf_rules_replace(const unsigned char *buf, size_t len)
{
	char tmp[MF_PATH_LEN + 32];
	if (mf_prof_size_allowed((off_t)len))
		return;
	/* (the pid and the clock: runs in other pid namespaces share a cache, and a run that
	 * died leaves its file) */
	mf_format(tmp, sizeof(tmp), "%s.%d.%lx", mf_rules_path, (int)getpid(),
		  (unsigned long)mf_ticks());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	int written = mf_write_all(fd, buf, len) == 0;
	if (close(fd) | !written || rename(tmp, mf_rules_path))
		unlink(tmp);
}

/* At exit: the file's keys (as it is now: another run may have saved since start) and this
 * run's new ones, and whether this run needed libunwind beyond them. Best effort: a cache
 * that cannot be written is only slower next time. */
static long mf_rules_save_apart(void *unused)
{
	(void)unused;
	const struct mf_rules_entry *set = mf_rules_new;
	if (!set)
		return 0;
	unsigned n = __atomic_load_n(&mf_rules_new_count, __ATOMIC_RELAXED);
	uint32_t flags = mf_rules_need ? 0 : MF_RULES_COMPLETE;
	if (!n && flags == mf_rules_flags_read && !mf_rules_damaged)
		return 0; /* nothing to say */
	mf_rules_mkdir();
	int lock = mf_rules_lock();
	const struct mf_rules_entry *old;
	uint64_t have, old_count;
	uint32_t old_flags;
	int damaged = mf_rules_read(&old, &have, &old_flags, 0) != NULL;
	if (damaged)
		have = 0;
	old_count = have + n > MF_RULES_MAX ? 0 : have; /* full: start over with this run's */
	size_t size = sizeof(struct mf_rules_header) + (old_count + n) * sizeof(*old);
	unsigned char *buf = mf_pages_new(size);
	if (!buf) {
		mf_rules_free(old, have);
		if (lock >= 0)
			close(lock);
		return 0;
	}
	/* The new entries gathered and sorted at the end of the array, merged forwards into its
	 * start: the merge never writes past what it has read. Repeated keys go (the file's
	 * stays). */
	struct mf_rules_entry *out =
	    (struct mf_rules_entry *)(buf + sizeof(struct mf_rules_header));
	struct mf_rules_entry *fresh = out + old_count;
	uint64_t last = 0;
	size_t k = 0;
	for (size_t i = 0; i < MF_RULES_NEW_SLOTS && k < n; i++) {
		struct mf_rules_entry e = {__atomic_load_n(&set[i].key, __ATOMIC_RELAXED),
					   __atomic_load_n(&set[i].rule, __ATOMIC_ACQUIRE)};
		if (e.key && mf_rules_plausible(e.rule))
			fresh[k++] = e;
	}
	n = (unsigned)k;
	mf_rules_sort(fresh, n);
	size_t i = 0, j = 0, count = 0, added = 0;
	while (i < old_count || j < n) {
		int from_old = j == n || (i < old_count && old[i].key <= fresh[j].key);
		struct mf_rules_entry e = from_old ? old[i++] : fresh[j++];
		if (e.key != last) {
			out[count++] = e;
			last = e.key;
			added += !from_old;
		}
	}
	mf_rules_free(old, have);
	struct mf_rules_header *h = (struct mf_rules_header *)buf;
	memcpy(h->magic, MF_RULES_MAGIC, 8);
	h->version = MF_RULES_VERSION;
	h->byte_order = MF_BYTE_ORDER_MARK;
	h->count = count;
	h->origin = mf_rules_origin();
	h->flags = flags;
	h->reserved = 0;
	h->check = mf_rules_check(out, count, flags, 0);
	int replace = (count || damaged) && (added || flags != old_flags || damaged);
	if (replace)
		mf_rules_replace(buf, sizeof(*h) + count * sizeof(*out));
	munmap(buf, size);
	if (lock >= 0) {
		if (replace) /* (a file more, perhaps) */
			mf_rules_prune(lock);
		close(lock);
	}
	return 0;
}

void mf_rules_save(void)
{
	mf_fds_apart(mf_rules_save_apart, NULL);
}
