/* The rule cache's directory kept bounded: a file per program build piles up as programs are
 * rebuilt, so a save that finds more than MF_RULES_FILES of them removes the least lately
 * used (a run's read refreshes its file's time once a day) down to three quarters of that,
 * and the files of saves that died before their rename (an hour old). Only this user's
 * regular files named as the cache names them. Runs at exit, holding the cache's lock: no
 * malloc (no opendir), errors ignored. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/internal.h"

enum { MF_RULES_TMP_AGE = 3600 };

/* A cache file's name: "<hex build-id>.rules" (1), a save's temporary "<that>.<pid>.<tsc>"
 * (2), or another (0). */
static int mf_rules_name_kind(const char *name)
{
	size_t hex = strspn(name, "0123456789abcdef");
	if (!hex || strncmp(name + hex, ".rules", 6))
		return 0;
	return name[hex + 6] == 0 ? 1 : name[hex + 6] == '.' ? 2 : 0;
}

/* Calls visit(dir, name, kind, st, arg) for each cache file of this user's in dir. */
static void mf_rules_each(int dir,
			  void (*visit)(int, const char *, int, const struct stat *, void *),
			  void *arg)
{
	_Alignas(8) char buf[4096];
	if (lseek(dir, 0, SEEK_SET))
		return;
	for (ssize_t n; (n = getdents64(dir, buf, sizeof(buf))) > 0;)
		for (ssize_t at = 0; at < n; at += ((struct dirent64 *)(buf + at))->d_reclen) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + at);
			struct stat st;
			int kind = mf_rules_name_kind(e->d_name);
			if (kind && !fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
			    S_ISREG(st.st_mode) && st.st_uid == geteuid())
				visit(dir, e->d_name, kind, &st, arg);
		}
}

struct mf_rules_files {
	uint64_t *times; /* the cache files' times (ns), as many as fit */
	size_t count, room;
	uint64_t before; /* the pass that removes: those older than this */
	time_t now;
};

static uint64_t mf_rules_time(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

/* The first pass: counts the cache files (and notes their times, where there is room), and
 * removes the temporaries of saves that died. */
static void mf_rules_count(int dir, const char *name, int kind, const struct stat *st, void *arg)
{
	struct mf_rules_files *f = arg;
	if (kind == 2 && st->st_mtim.tv_sec + MF_RULES_TMP_AGE < f->now)
		unlinkat(dir, name, 0);
	if (kind != 1)
		return;
	if (f->count < f->room)
		f->times[f->count] = mf_rules_time(st);
	f->count++;
}

static void mf_rules_remove_old(int dir, const char *name, int kind, const struct stat *st,
				void *arg)
{
	const struct mf_rules_files *f = arg;
	if (kind == 1 && mf_rules_time(st) < f->before)
		unlinkat(dir, name, 0);
}

void mf_rules_prune(int dir)
{
	struct mf_rules_files f = {.now = time(NULL), .room = 4 * MF_RULES_FILES};
	if (!(f.times = mf_pages_new(f.room * sizeof(*f.times))))
		return;
	mf_rules_each(dir, mf_rules_count, &f);
	size_t noted = f.count < f.room ? f.count : f.room, keep = MF_RULES_FILES / 4 * 3;
	if (f.count > MF_RULES_FILES) {
		/* The time of the keep-th newest noted: those older go (ties stay). A binary
		 * search over time: the times need no order. */
		uint64_t lo = 0, hi = UINT64_MAX;
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2 + 1;
			size_t newer = 0;
			for (size_t i = 0; i < noted; i++)
				newer += f.times[i] >= mid;
			if (newer >= keep)
				lo = mid;
			else
				hi = mid - 1;
		}
		f.before = lo;
		mf_rules_each(dir, mf_rules_remove_old, &f);
	}
	munmap(f.times, f.room * sizeof(*f.times));
}
