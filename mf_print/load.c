/* Reading discovered profile directories into the model (see load.h). A profile is read,
 * added and freed before the next, so memory holds one file at a time besides the model. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "load.h"
#include "reader.h"
#include "snapshots.h"

#define MF_PLACEHOLDER_MODULES_MAX 65536

static void mf_error(const char *what, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "mf_print: %s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A map for a directory without a readable one: "[module N]" entries, never opened. */
static int mf_placeholder_map(struct mf_modmap *m, uint32_t need)
{
	if (need <= m->count)
		return 0;
	if (need > MF_PLACEHOLDER_MODULES_MAX)
		return -1;
	struct mf_module *mods = realloc(m->mods, (size_t)need * sizeof(*mods));
	if (!mods)
		return -1;
	for (uint32_t i = m->count; i < need; i++) {
		memset(&mods[i], 0, sizeof(mods[i]));
		snprintf(mods[i].path, sizeof(mods[i].path), "[module %u]", i);
	}
	m->mods = mods;
	m->count = need;
	return 0;
}

static const char *mf_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int mf_load_liveness(uint64_t pid, uint64_t start_ticks)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%llu/stat", (unsigned long long)pid);
	FILE *f = start_ticks ? fopen(path, "re") : NULL;
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	/* field 22, after the command name in parentheses (which may hold either) */
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	return p && strtoull(p, NULL, 10) == start_ticks ? MF_END_RUNNING : MF_END_UNRECORDED;
}

void mf_load_process_info(struct mf_process *info, const struct mf_process_record *rec,
			  char *cmdline)
{
	info->pid = rec->pid;
	info->ppid = rec->ppid;
	info->exe = rec->exe;
	info->start_ticks = rec->start_ticks;
	info->start_ns = rec->start_ns;
	info->image_ns = rec->image_ns;
	info->end_ns = rec->end_ns;
	info->exec_from_dir = rec->exec_from;
	info->unrecorded_calls = rec->counters[MF_PROCESS_UNRECORDED_CALLS];
	info->unknown_frees = rec->counters[MF_PROCESS_UNKNOWN_FREES];
	info->peak_bytes = rec->counters[MF_PROCESS_PEAK_BYTES];
	/* (version 6: summed from the leaves as they are read, as a killed process's leaves
	 * may not be up to date; see struct mf_life) */
	info->peak_blocks = rec->version >= 6 ? 0 : rec->counters[MF_PROCESS_PEAK_BLOCKS];
	info->peak_ns = rec->counters[MF_PROCESS_PEAK_NS];
	info->peak_id = rec->version >= 6 ? rec->counters[MF_PROCESS_PEAK_ID] : 0;
	info->unrecorded_bytes = rec->counters[MF_PROCESS_UNRECORDED_BYTES];
	info->cmdline_cut = !!(rec->flags & MF_PROCESS_CMDLINE_CUT);
	/* the arguments joined by spaces */
	memcpy(cmdline, rec->cmdline, rec->cmdline_len);
	cmdline[rec->cmdline_len] = 0;
	for (uint32_t i = 0; i + 1 < rec->cmdline_len; i++)
		if (!cmdline[i])
			cmdline[i] = ' ';
	info->cmdline = cmdline;
	info->status = rec->status;
	info->status_known = !!(rec->flags & MF_PROCESS_STATUS);
	info->by_parent = !!(rec->flags & MF_PROCESS_BY_PARENT);
	info->core = !!(rec->flags & MF_PROCESS_CORE);
	info->raw_exit = !!(rec->flags & MF_PROCESS_RAW_EXIT);
	switch (rec->state) {
	case MF_PROCESS_EXITED:
		/* An image that exits writes its end itself; one its parent's wait wrote is not
		 * this image's exit, but its pid's after it: an exec'd program not recorded
		 * (static, setuid, LD_PRELOAD dropped, no allocation), or a raw exit_group; but
		 * for a program whose runtime exits so (Go), it is its exit. */
		info->end = info->by_parent && !info->raw_exit ? MF_END_UNRECORDED : MF_END_EXIT;
		break;
	case MF_PROCESS_QUICK_EXIT:
		info->end = MF_END_QUICK_EXIT;
		break;
	case MF_PROCESS_EXECED:
		info->end = MF_END_EXEC;
		break;
	case MF_PROCESS_SIGNALED:
		info->end = MF_END_SIGNAL;
		break;
	default:
		info->end = mf_load_liveness(rec->pid, rec->start_ticks);
	}
	/* (detached: its end after is not its own, and its pid's a parent saw is not this
	 * image's; its counts end at detach) */
	if (rec->flags & MF_PROCESS_DETACHED) {
		info->detached_ns = rec->detached_ns;
		if (info->end != MF_END_RUNNING && info->end != MF_END_EXEC)
			info->end = MF_END_DETACHED;
		if (info->end != MF_END_EXEC)
			info->end_ns = rec->detached_ns;
	}
}

/* The program's name: argv[0]'s base name, else the executable's (the record's, else the
 * module map's first module), else "pid N". */
static void mf_program_name(char *buf, size_t size, const struct mf_process_record *rec,
			    const struct mf_modmap *map, uint64_t pid)
{
	const char *path = rec && rec->cmdline_len && rec->cmdline[0]  ? rec->cmdline
			   : rec && rec->exe[0]			       ? rec->exe
			   : map->count && map->mods[0].path[0] == '/' ? map->mods[0].path
								       : "";
	if (*mf_base(path))
		snprintf(buf, size, "%.*s", (int)size - 1, mf_base(path));
	else
		snprintf(buf, size, "pid %llu", (unsigned long long)pid);
}

/* The pid in a directory's name, malloc_freq.<pid>[.<n>]; 0 if it has none. */
static uint64_t mf_dir_pid(const char *dir)
{
	const char *base = mf_base(dir);
	if (strncmp(base, "malloc_freq.", 12))
		return 0;
	char *end;
	unsigned long long pid = strtoull(base + 12, &end, 10);
	return end != base + 12 && (*end == 0 || *end == '.') ? pid : 0;
}

void mf_load_program(const char *dir, char *buf, size_t size, uint64_t *pid)
{
	char path[PATH_MAX + 16], err[512];
	struct mf_process_record rec;
	struct mf_modmap map = {0};
	int have_record = 0;
	snprintf(path, sizeof(path), "%s/process", dir);
	if (mf_read_process(path, &rec, err, sizeof(err)) == 0)
		have_record = 1;
	snprintf(path, sizeof(path), "%s/modules", dir);
	if (mf_read_modules(path, &map, err, sizeof(err)))
		map = (struct mf_modmap){0};
	*pid = have_record && rec.pid ? rec.pid : mf_dir_pid(dir);
	mf_program_name(buf, size, have_record ? &rec : NULL, &map, *pid);
	mf_modmap_free(&map);
}

static int mf_remember_program(struct mf_load *ld, const char *name)
{
	for (size_t i = 0; i < ld->nprograms; i++)
		if (!strcmp(ld->programs[i], name))
			return 0;
	char **slot = mf_array_push(ld->programs, ld->nprograms, ld->cap_programs);
	if (!slot || !(*slot = strdup(name)))
		return -ENOMEM;
	return 0;
}

/* Whether --process chose this process (by pid, or by its program's name as reports show it). */
static int mf_chosen(const struct mf_load *ld, const struct mf_process *info)
{
	if (!ld->nprocess)
		return 1;
	for (size_t i = 0; i < ld->nprocess; i++) {
		const char *want = ld->process[i];
		char *end;
		unsigned long long pid = strtoull(want, &end, 10);
		if (*want && !*end ? pid == info->pid : !strcmp(want, info->name))
			return 1;
	}
	return 0;
}

/* One directory as it is read. */
struct mf_dir {
	const struct mf_found *found;
	struct mf_modmap map;
	int have_map, have_record;
	struct mf_process_record rec;
	char cmdline[MF_CMDLINE_LEN + 1];
	char name[256];
	struct mf_process info;
	uint32_t process; /* in the model; MF_NONE until added */
	int decided, chosen;
	char home[PATH_MAX]; /* the process directory: found's, or its parent when found is a
				snapshot named on the command line */
	unsigned char *tags; /* the `tags` file (its names after its header); NULL: none */
	uint32_t ntags;
	char top[PATH_MAX + 256]; /* where the thread files are read: the directory or a snapshot */
	char base[PATH_MAX + 256]; /* the snapshot subtracted from them; "": none */
	struct mf_snap_state top_state, base_state; /* the files of each (top's if top_snap) */
	int top_snap;
};

/* Decides (once the pid is known: from the record, the name, or the first profile) whether
 * the process is chosen. */
static int mf_dir_decide(struct mf_load *ld, struct mf_dir *d, uint64_t pid)
{
	if (d->decided)
		return 0;
	d->decided = 1;
	if (!d->info.pid)
		d->info.pid = pid;
	mf_program_name(d->name, sizeof(d->name), d->have_record ? &d->rec : NULL, &d->map,
			d->info.pid);
	d->info.name = d->name;
	int r = mf_remember_program(ld, d->name);
	d->chosen = mf_chosen(ld, &d->info);
	ld->chosen += d->chosen;
	ld->unchosen += !d->chosen;
	return r;
}

/* The chosen process d in the model, once: when it is decided, or with --thread at its first
 * thread chosen (a process none of whose threads is chosen is left out). */
static int mf_dir_add(struct mf_model *m, struct mf_dir *d)
{
	if (d->process != MF_NONE)
		return 0;
	/* (its snapshots' times: the --html chart marks them) */
	int r = mf_snapshot_marks(d->home, &d->info.snaps, &d->info.nsnaps);
	if (!r)
		r = mf_model_add_process(m, &d->info, &d->process);
	free(d->info.snaps);
	d->info.snaps = NULL;
	d->info.nsnaps = 0;
	return r;
}

static void mf_dir_record(struct mf_dir *d, struct mf_load *ld)
{
	char path[PATH_MAX + 16], err[512];
	d->info = (struct mf_process){
	    .dir = d->home, .exe = "", .cmdline = "", .exec_from_dir = "", .end = MF_END_UNKNOWN};
	snprintf(path, sizeof(path), "%s/process", d->home);
	if (mf_read_process(path, &d->rec, err, sizeof(err)) == 0) {
		d->have_record = 1;
		mf_load_process_info(&d->info, &d->rec, d->cmdline);
		d->info.dir = d->home;
	} else if (errno != ENOENT) {
		fprintf(stderr, "mf_print: warning: %s: %s; how the process ended is not known\n",
			path, err);
		ld->failed = 1;
	}
	if (!d->info.pid)
		d->info.pid = mf_dir_pid(d->home);
	d->info.files = (uint32_t)d->found->nprofiles;
}

/* p minus its state in d's base snapshot (none if the thread started after it). 0 or -ENOMEM;
 * an error of the input is said, and p is then left out (1). */
static int mf_dir_subtract(struct mf_load *ld, struct mf_dir *d, struct mf_profile *p,
			   const char *name)
{
	char err[512];
	struct mf_profile b;
	const struct mf_snap_file *f = mf_snapshot_state_find(&d->base_state, name);
	if (!f)
		return 0;
	const char *path = f->path;
	int r = mf_read_profile(path, &b, err, sizeof(err));
	if (r > 0)
		return 0;
	if (r < 0 || b.cut) { /* (the part of a snapshot would leave too much) */
		mf_error(path, "%s", err);
		ld->failed = 1;
		if (!r)
			mf_profile_free(&b);
		return 1;
	}
	mf_snapshot_state_fix(&d->base_state, f, &b);
	r = mf_profile_subtract(p, &b, d->have_record ? d->info.peak_id : 0, err, sizeof(err));
	mf_profile_free(&b);
	if (r == -1) {
		mf_error(p->path, "%s", err);
		ld->failed = 1;
		return 1;
	}
	return r;
}

/* The directory's tag names (`tags`), if it has them, into d->info. A damaged file is named;
 * its tags are then shown by number. */
static void mf_dir_tags(struct mf_dir *d, struct mf_load *ld)
{
	char path[PATH_MAX + 8];
	size_t size;
	struct mf_tags_header h;
	snprintf(path, sizeof(path), "%s/tags", d->home);
	int r =
	    mf_read_file(path, sizeof(h) + (size_t)MF_TAGS_MAX * MF_TAG_NAME_LEN, &d->tags, &size);
	if (r == -ENOENT)
		return;
	const char *bad = r ? strerror(-r) : NULL;
	if (!bad && size < sizeof(h))
		bad = "truncated";
	if (!bad)
		memcpy(&h, d->tags, sizeof(h));
	if (!bad &&
	    (memcmp(h.magic, MF_TAGS_MAGIC, sizeof(h.magic)) ||
	     h.byte_order != MF_BYTE_ORDER_MARK || h.version < 4 || h.name_len != MF_TAG_NAME_LEN ||
	     h.count > MF_TAGS_MAX || (size - sizeof(h)) / MF_TAG_NAME_LEN < h.count))
		bad = "not a malloc_freq tags file of version 4 or later, or cut short";
	if (bad) {
		fprintf(stderr, "mf_print: warning: %s: %s; tags are shown by number\n", path, bad);
		ld->failed = 1;
		free(d->tags);
		d->tags = NULL;
		return;
	}
	for (uint32_t i = 0; i < h.count; i++) /* (each name ends inside its record) */
		d->tags[sizeof(h) + (size_t)(i + 1) * MF_TAG_NAME_LEN - 1] = 0;
	d->info.tags = (const char *)d->tags + sizeof(h);
	d->info.ntags = h.count;
}

/* A thread of a process still running may name a module its process loaded after d's module
 * map was read: the map read again (the file is only ever added to), if it has more. */
static void mf_dir_modules_again(struct mf_dir *d)
{
	char path[PATH_MAX + 16], err[512];
	struct mf_modmap fresh;
	snprintf(path, sizeof(path), "%s/modules", d->home);
	if (mf_read_modules(path, &fresh, err, sizeof(err)))
		return;
	if (fresh.count > d->map.count) {
		mf_modmap_free(&d->map);
		d->map = fresh;
	} else {
		mf_modmap_free(&fresh);
	}
}

/* Reads one thread's file into the process of d (added when first needed). */
static int mf_dir_profile(struct mf_model *m, struct mf_load *ld, struct mf_dir *d,
			  const char *name)
{
	char path[2 * PATH_MAX], err[512];
	struct mf_profile p;
	const struct mf_snap_file *f =
	    d->top_snap ? mf_snapshot_state_find(&d->top_state, name) : NULL;
	snprintf(path, sizeof(path), "%s", f ? f->path : "");
	if (!f)
		snprintf(path, sizeof(path), "%s/%s", d->top, name);
	ld->files++;
	int rp = mf_read_profile(path, &p, err, sizeof(err));
	if (rp > 0) {
		/* (a process still running may be making it now: nothing is lost, nothing said) */
		if (d->info.end == MF_END_RUNNING)
			ld->files--;
		else
			fprintf(stderr, "mf_print: warning: %s: %s\n", path, err);
		return 0;
	}
	if (rp < 0) {
		mf_error(path, "%s", err);
		ld->failed = 1;
		return 0;
	}
	if (p.cut && p.zeros) {
		mf_error(path, "%s: the %llu before are read", err,
			 (unsigned long long)p.node_count);
		ld->failed = 1;
	} else if (p.cut) {
		mf_error(path,
			 "%s: the %llu before the cut are read, the calls of the rest are lost",
			 err, (unsigned long long)p.node_count);
		ld->failed = 1;
	}
	if (f)
		mf_snapshot_state_fix(&d->top_state, f, &p);
	int r = 0;
	if (!d->have_map || d->map.cut) { /* (the modules it lacks: placeholders) */
		uint32_t need = 0;
		for (uint64_t k = 1, mark = 0; k < p.node_count; k++) {
			mf_profile_release_behind(&p, &mark, k);
			if (p.nodes[k].module < MF_MODULE_MAX && p.nodes[k].module >= need)
				need = p.nodes[k].module + 1;
		}
		if (mf_placeholder_map(&d->map, need)) {
			mf_error(path, "names module %u and there is no module map", need - 1);
			ld->failed = 1;
			goto done;
		}
	}
	if (d->have_map && mf_profile_check_modules(&p, d->map.count, err, sizeof(err)))
		mf_dir_modules_again(d);
	if (mf_profile_check_modules(&p, d->map.count, err, sizeof(err))) {
		mf_error(path, "%s", err);
		ld->failed = 1;
		goto done;
	}
	if ((r = mf_dir_decide(ld, d, p.header.pid)) || !d->chosen) {
		ld->files--; /* (a file of a process not chosen is not read) */
		goto done;
	}
	if (ld->have_thread && p.header.tid != ld->thread) {
		ld->files--;
		ld->passed++;
		goto done;
	}
	if ((r = mf_dir_add(m, d)))
		goto done;
	if (d->base[0] && (r = mf_dir_subtract(ld, d, &p, name)))
		goto done;
	if (!(r = mf_model_add_modules(m, d->process, &d->map)) &&
	    !(r = mf_model_add_thread(m, d->process, &p)))
		ld->threads++;
done:
	mf_profile_free(&p);
	return r > 0 ? 0 : r;
}

/* The state of snapshot name (record rec) of d into *st: 0; 1 when it cannot be read (said);
 * -ENOMEM. A snapshot it builds on that is missing is said. */
static int mf_dir_state(struct mf_load *ld, struct mf_dir *d, const char *name,
			const struct mf_snapshot_record *rec, struct mf_snap_state *st)
{
	char err[512];
	int r = mf_snapshot_state(d->home, name, rec, st, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r) { /* (err names its file; 1: said) */
		if (r < 0)
			fprintf(stderr, "mf_print: %s\n", err);
		ld->failed = 1;
		return 1;
	}
	if (st->missing) {
		mf_snapshot_say_missing(d->home, name, st,
					"the threads that did not change since it are left out");
		ld->failed = 1;
	}
	return 0;
}

/* The names of top's files, for the caller to read (*own 2: the array alone is its). */
static int mf_dir_state_names(const struct mf_snap_state *st, char ***names, size_t *n, int *own)
{
	*names = NULL, *n = 0, *own = 2;
	if (!st->n)
		return 0;
	if (!(*names = malloc(st->n * sizeof(**names))))
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++)
		(*names)[i] = st->v[i].name;
	*n = st->n;
	return 0;
}

/* Which state of the process d reads (ld->top, ld->base): d->top, d->base and their states
 * set, and the thread files' names in *names (the directory's, or the snapshot's: *own then,
 * to free). 0; 1 when the process is not read: the snapshot asked for is not there (counted
 * in ld->lacking, for the caller to say), or cannot be read (said); -ENOMEM. */
static int mf_dir_states(struct mf_load *ld, struct mf_dir *d, char ***names, size_t *n, int *own)
{
	const char *dir = d->home, *spec = ld->top;
	char name[256], err[512];
	struct mf_snapshot_record top, base;
	int r, named = strcmp(d->home, d->found->dir) != 0;
	snprintf(d->top, sizeof(d->top), "%s", d->found->dir);
	*names = d->found->profiles, *n = d->found->nprofiles, *own = 0;
	if (ld->top || named) {
		if (ld->top && (r = mf_snapshot_find(dir, ld->top, name, sizeof(name), &top, err,
						     sizeof(err))))
			goto missing;
		if (ld->top) {
			snprintf(d->top, sizeof(d->top), "%s/%s", dir, name);
		} else { /* (a snapshot named on the command line: as --snapshot reads it) */
			char path[PATH_MAX + 16];
			snprintf(path, sizeof(path), "%s/snapshot", d->found->dir);
			snprintf(name, sizeof(name), "%s", mf_base(d->found->dir));
			if (mf_read_snapshot(path, &top, err, sizeof(err))) {
				mf_error(path, "%s", err);
				ld->failed = 1;
				return 1;
			}
		}
		if ((r = mf_dir_state(ld, d, name, &top, &d->top_state)))
			return r;
		d->top_snap = 1;
		if ((r = mf_dir_state_names(&d->top_state, names, n, own)))
			return r;
	}
	if (ld->base) {
		spec = ld->base;
		if ((r = mf_snapshot_find(dir, ld->base, name, sizeof(name), &base, err,
					  sizeof(err))))
			goto missing;
		if (ld->top && base.number >= top.number) {
			mf_error(dir, "snapshot %s is not earlier than snapshot %s", ld->base,
				 ld->top);
			ld->failed = 1;
			return 1;
		}
	} else if (ld->whole || ld->top || named ||
		   mf_snapshot_last_reset(dir, name, sizeof(name), &base, err, sizeof(err))) {
		/* (a snapshot, by --snapshot or named on the command line, is read as it was
		 * taken: the last reset, which may come after it, is not subtracted) */
		if (!ld->top && !ld->whole && named && !ld->snapshots++)
			snprintf(ld->snapshot, sizeof(ld->snapshot), "%s", mf_base(d->found->dir));
		return 0;
	} else {
		ld->resets++;
	}
	snprintf(d->base, sizeof(d->base), "%s/%s", dir, name);
	return mf_dir_state(ld, d, name, &base, &d->base_state);
missing:
	if (r > 0) {
		if (!ld->lacking++) {
			ld->lacking_dir = strdup(dir);
			ld->lacking_spec = spec;
		}
		return ld->lacking_dir ? 1 : -ENOMEM;
	}
	fprintf(stderr, "mf_print: %s\n", err); /* (err names its file) */
	ld->failed = 1;
	return 1;
}

/* The file names mf_dir_states gave, if they are its own (a snapshot's). */
static void mf_dir_names_free(char **names, size_t n, int own)
{
	for (size_t i = 0; own == 1 && i < n; i++)
		free(names[i]);
	if (own)
		free(names);
}

/* d and what it holds, freed. */
static void mf_dir_free(struct mf_dir *d)
{
	mf_snapshot_state_free(&d->top_state);
	mf_snapshot_state_free(&d->base_state);
	mf_modmap_free(&d->map);
	free(d->tags);
	free(d);
}

int mf_load_dir(struct mf_model *m, const struct mf_found *found, struct mf_load *ld)
{
	char path[PATH_MAX + 16], err[512];
	struct mf_dir *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->found = found;
	d->process = MF_NONE;
	ld->dirs++;
	/* A snapshot named on the command line reads as its process directory's. */
	snprintf(d->home, sizeof(d->home), "%s", found->dir);
	snprintf(path, sizeof(path), "%s/snapshot", found->dir);
	char *slash = strrchr(d->home, '/');
	if (access(path, F_OK) == 0 && slash && slash != d->home)
		*slash = 0;
	else if (access(path, F_OK) == 0 && !slash)
		snprintf(d->home, sizeof(d->home), ".");
	snprintf(path, sizeof(path), "%s/modules", d->home);
	errno = 0; /* (a file read but not valid leaves it so: only a missing one is ENOENT) */
	d->have_map = mf_read_modules(path, &d->map, err, sizeof(err)) == 0;
	int missing = errno == ENOENT;
	if (!d->have_map) {
		fprintf(stderr, "mf_print: warning: %s: %s; frames are shown as module+offset\n",
			path, err);
		ld->failed |= !missing;
	} else if (d->map.cut) {
		mf_error(path,
			 "%s: the %u before the cut are read, the frames of the others are shown "
			 "as module+offset",
			 err, d->map.count);
		ld->failed = 1;
	}
	mf_dir_record(d, ld);
	mf_dir_tags(d, ld);
	char **names;
	size_t n;
	int own, r = mf_dir_states(ld, d, &names, &n, &own);
	if (r) {
		mf_dir_names_free(names, n, own); /* (a snapshot's, listed before the error) */
		mf_dir_free(d);
		return r < 0 ? r : 0;
	}
	/* Known now, the process is decided now, else by its first profile's pid; without
	 * --thread it is in the model even if none of its threads can be read. */
	if (d->info.pid && !(r = mf_dir_decide(ld, d, d->info.pid)) && d->chosen &&
	    !ld->have_thread)
		r = mf_dir_add(m, d);
	size_t had = ld->threads;
	for (size_t i = 0; i < n && !r && (!d->decided || d->chosen); i++)
		r = mf_dir_profile(m, ld, d, names[i]);
	ld->dirs_used += ld->threads > had;
	mf_dir_names_free(names, n, own);
	mf_dir_free(d);
	return r;
}

int mf_load_lacking(const struct mf_load *ld)
{
	if (!ld->lacking)
		return 0;
	const char *spec = ld->lacking_spec;
	if (ld->lacking == 1 && ld->dirs == 1)
		mf_error(ld->lacking_dir, "no snapshot %s here (--list names them)", spec);
	else if (ld->lacking == ld->dirs)
		fprintf(stderr,
			"mf_print: none of the %zu processes has snapshot %s (--list names "
			"them)\n",
			ld->dirs, spec);
	else
		fprintf(stderr,
			"mf_print: %zu of %zu processes %s no snapshot %s and %s left out "
			"(%s%s; --list names each one's)\n",
			ld->lacking, ld->dirs, ld->lacking == 1 ? "has" : "have", spec,
			ld->lacking == 1 ? "is" : "are", ld->lacking_dir,
			ld->lacking > 1 ? ", ..." : "");
	return ld->lacking == ld->dirs;
}

void mf_load_free(struct mf_load *ld)
{
	for (size_t i = 0; i < ld->nprograms; i++)
		free(ld->programs[i]);
	free(ld->programs);
	ld->programs = NULL;
	ld->nprograms = 0;
	free(ld->lacking_dir);
	ld->lacking_dir = NULL;
}
