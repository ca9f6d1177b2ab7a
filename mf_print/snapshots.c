/* Snapshots of a process directory (see snapshots.h). */
#define _GNU_SOURCE /* strverscmp */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "array.h"
#include "pack.h"
#include "snapshots.h"
#include "text.h"

static int mf_snap_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int mf_read_snapshot(const char *path, struct mf_snapshot_record *out, char *err, size_t errlen)
{
	unsigned char *data;
	size_t size;
	int r = mf_read_file(path, 4096, &data, &size);
	if (r)
		return mf_snap_fail(err, errlen, "%s", strerror(-r));
	int bad = size < sizeof(*out);
	if (!bad)
		memcpy(out, data, sizeof(*out));
	free(data);
	if (bad)
		return mf_snap_fail(err, errlen, "truncated: %zu bytes", size);
	if (memcmp(out->magic, MF_SNAPSHOT_MAGIC, sizeof(out->magic)))
		return mf_snap_fail(err, errlen, "not a malloc_freq snapshot record (bad magic)");
	if (out->byte_order != MF_BYTE_ORDER_MARK)
		return mf_snap_fail(err, errlen, "written on a machine of the other byte order");
	if (out->version < 4 || out->version > MF_FORMAT_VERSION ||
	    out->record_size != sizeof(*out))
		return mf_snap_fail(err, errlen,
				    "format version %u (record size %u): this mf_print "
				    "reads version 4 to %u",
				    out->version, out->record_size, MF_FORMAT_VERSION);
	out->label[sizeof(out->label) - 1] = 0;
	return 0;
}

/* The number of a snapshot directory's name, snap.<n>[.<label>], and where its label starts
 * (NULL: none); 0 if the name is not one. */
static unsigned long mf_snap_number(const char *name, const char **label)
{
	if (strncmp(name, "snap.", 5) || name[5] < '1' || name[5] > '9')
		return 0;
	char *end;
	unsigned long n = strtoul(name + 5, &end, 10);
	if (*end && *end != '.')
		return 0;
	*label = *end ? end + 1 : NULL;
	return n;
}

/* Walks dir's snapshots: pick(name, n, label, arg) returns 1 for one that is wanted; the last
 * wanted one (in number order) is chosen. Its record is checked by want (NULL: any). */
static int mf_snap_choose(const char *dir,
			  int (*pick)(unsigned long n, const char *label, const void *arg),
			  const void *arg, uint32_t flags, char *name, size_t size,
			  struct mf_snapshot_record *rec, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d)
		return mf_snap_fail(err, errlen, "%s: %s", dir, strerror(errno));
	unsigned long best = 0;
	struct dirent *e;
	int r = 1;
	char path[PATH_MAX], twin[256] = "";
	while ((e = readdir(d))) {
		const char *label;
		unsigned long n = mf_snap_number(e->d_name, &label);
		if (!n || n < best || !pick(n, label, arg) || strlen(e->d_name) >= size)
			continue;
		if (flags) {
			struct mf_snapshot_record x;
			snprintf(path, sizeof(path), "%s/%s/snapshot", dir, e->d_name);
			if (mf_read_snapshot(path, &x, err, errlen) || !(x.flags & flags))
				continue;
		}
		if (n == best) { /* (two of one number: which one is meant is not known) */
			snprintf(twin, sizeof(twin), "%s", e->d_name);
			continue;
		}
		best = n;
		twin[0] = 0;
		strcpy(name, e->d_name);
		r = 0;
	}
	closedir(d);
	if (r)
		return r;
	if (twin[0])
		return mf_snap_fail(err, errlen,
				    "%s: %s and %s both have number %lu: which one is meant is not "
				    "known; rename or remove one",
				    dir, name, twin, best);
	snprintf(path, sizeof(path), "%s/%s/snapshot", dir, name);
	if (mf_read_snapshot(path, rec, err, errlen))
		return mf_snap_fail(err, errlen, "%s/%s/snapshot: %s", dir, name,
				    strcpy(path, err));
	return 0;
}

static int mf_snap_pick_spec(unsigned long n, const char *label, const void *arg)
{
	const char *spec = arg;
	char *end;
	unsigned long want = strtoul(spec, &end, 10);
	if (*spec >= '0' && *spec <= '9' && !*end)
		return n == want;
	return label && !strcmp(label, spec);
}

static int mf_snap_pick_any(unsigned long n, const char *label, const void *arg)
{
	(void)n, (void)label, (void)arg;
	return 1;
}

int mf_snapshot_find(const char *dir, const char *spec, char *name, size_t size,
		     struct mf_snapshot_record *rec, char *err, size_t errlen)
{
	return mf_snap_choose(dir, mf_snap_pick_spec, spec, 0, name, size, rec, err, errlen);
}

int mf_snapshot_newest(const char *dir, char *name, size_t size, struct mf_snapshot_record *rec,
		       char *err, size_t errlen)
{
	return mf_snap_choose(dir, mf_snap_pick_any, NULL, 0, name, size, rec, err, errlen);
}

int mf_snapshot_last_reset(const char *dir, char *name, size_t size, struct mf_snapshot_record *rec,
			   char *err, size_t errlen)
{
	return mf_snap_choose(dir, mf_snap_pick_any, NULL, MF_SNAPSHOT_RESET, name, size, rec, err,
			      errlen);
}

static int mf_mark_cmp(const void *a, const void *b)
{
	const struct mf_snapshot_mark *x = a, *y = b;
	return x->number < y->number ? -1 : x->number > y->number;
}

int mf_snapshot_marks(const char *dir, struct mf_snapshot_mark **marks, uint32_t *n)
{
	*marks = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	size_t cap = 0;
	int r = 0;
	while (!r && (e = readdir(d))) {
		const char *label;
		char path[PATH_MAX], err[256];
		struct mf_snapshot_record rec;
		if (!mf_snap_number(e->d_name, &label))
			continue;
		snprintf(path, sizeof(path), "%s/%s/snapshot", dir, e->d_name);
		if (mf_read_snapshot(path, &rec, err, sizeof(err)))
			continue;
		struct mf_snapshot_mark *x = mf_array_push(*marks, *n, cap);
		if (!x)
			r = -ENOMEM;
		else
			*x = (struct mf_snapshot_mark){rec.number, rec.time_ns};
	}
	closedir(d);
	if (*n)
		qsort(*marks, *n, sizeof(**marks), mf_mark_cmp);
	return r;
}

static uint64_t mf_less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The records after node i of copy (p's nodes) less those of base (malloc_freq_format.h):
 * what counts; a leaf's size keys are taken in order, so base's are a prefix of p's. Peaks
 * and a leaf's most live bytes and blocks are of a moment, not sums: p's stay. */
static void mf_records_subtract(struct mf_node *copy, const struct mf_profile *base, uint64_t i)
{
	uint64_t *to = (uint64_t *)&copy[i + 1];
	const uint64_t *from = (const uint64_t *)&base->nodes[i + 1];
	if (copy[i].module == MF_MODULE_SIZES) {
		for (int b = 0; b < MF_SIZE_BUCKETS; b++)
			to[b] = mf_less(to[b], from[b]);
		return;
	}
	struct mf_leaf x, y;
	memcpy(&x, to, sizeof(x));
	memcpy(&y, from, sizeof(y));
	x.temporaries = mf_less(x.temporaries, y.temporaries);
	for (int k = 0; k < MF_LEAF_SIZES; k++)
		x.size_count[k] = mf_less(x.size_count[k], y.size_count[k]);
	memcpy(to, &x, sizeof(x));
	if (!(base->header.records & MF_RECORD_LIFE))
		return;
	struct mf_life l, m; /* (p's version is base's) */
	mf_profile_life_get(base, copy, i, &l);
	mf_profile_life_get(base, base->nodes, i, &m);
	l.blocks = mf_less(l.blocks, m.blocks);
	l.bytes = mf_less(l.bytes, m.bytes);
	l.frees = mf_less(l.frees, m.frees);
	l.freed_bytes = mf_less(l.freed_bytes, m.freed_bytes);
	for (int b = 0; b < MF_LIFETIME_BUCKETS; b++)
		l.lifetime[b] = mf_less(l.lifetime[b], m.lifetime[b]);
	l.lifetime_ns = mf_less(l.lifetime_ns, m.lifetime_ns);
	mf_profile_life_put(base, copy, i, &l);
}

/* The timeline since base was copied: the records after it, less what base had counted (its
 * leaves' bytes and temporaries, its calls, by entry point too); live bytes and blocks are
 * states, kept as read. */
static void mf_timeline_subtract(struct mf_profile *p, const struct mf_profile *base)
{
	uint64_t from =
	    base->header.end_ns ? base->header.end_ns : base->header.timeline_checked_ns;
	uint64_t bytes = 0, temporaries = 0;
	struct mf_timeline_entry entry[MF_ENTRY_COUNT] = {{0}};
	for (uint64_t i = 1, after = 0; i < base->node_count; i += 1 + after) {
		const struct mf_node *b = &base->nodes[i];
		after = mf_profile_slots_after(base, b);
		if (b->module != MF_MODULE_ENTRY)
			continue;
		bytes += b->bytes;
		if (b->rel_pc < MF_ENTRY_COUNT) {
			entry[b->rel_pc].calls += b->calls;
			entry[b->rel_pc].bytes += b->bytes;
		}
		if (after) {
			struct mf_leaf x; /* (copied for the type) */
			memcpy(&x, b + 1, sizeof(x));
			temporaries += x.temporaries;
		}
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < p->timeline_count; i++) {
		struct mf_timeline_record r = p->timeline[i];
		if (r.calls <= base->header.calls_total) /* (by calls: the coarse clock may read
							    before base's copy, made after) */
			continue;
		r.calls = mf_less(r.calls, base->header.calls_total);
		r.bytes = mf_less(r.bytes, bytes);
		r.temporaries = mf_less(r.temporaries, temporaries);
		for (int e = 0; !(r.flags & MF_TIMELINE_CALLS_ONLY) && e < MF_ENTRY_COUNT; e++) {
			r.by_entry[e].calls = mf_less(r.by_entry[e].calls, entry[e].calls);
			r.by_entry[e].bytes = mf_less(r.by_entry[e].bytes, entry[e].bytes);
		}
		p->timeline[k++] = r;
	}
	p->timeline_count = k;
	struct mf_prof_header *h = &p->header;
	h->timeline_checked_calls = mf_less(h->timeline_checked_calls, base->header.calls_total);
	p->timeline_from_ns = from;
}

int mf_profile_subtract(struct mf_profile *p, const struct mf_profile *base, uint64_t peak_id,
			char *err, size_t errlen)
{
	if (base->node_count > p->node_count || base->header.tid != p->header.tid ||
	    base->header.sample_rate != p->header.sample_rate ||
	    base->header.version != p->header.version || base->header.records != p->header.records)
		return mf_snap_fail(err, errlen, "%s is not an earlier state of this file",
				    base->path);
	for (uint64_t i = 1, after = 0; i < base->node_count; i += 1 + after) {
		const struct mf_node *a = &p->nodes[i], *b = &base->nodes[i];
		after = mf_profile_slots_after(base, b);
		int keys_differ = 0;
		if (b->module == MF_MODULE_ENTRY && after) {
			const struct mf_leaf *x = (const struct mf_leaf *)(a + 1),
					     *y = (const struct mf_leaf *)(b + 1);
			for (int k = 0; k < MF_LEAF_SIZES; k++)
				keys_differ |= y->size_key[k] && y->size_key[k] != x->size_key[k];
		}
		if (a->rel_pc != b->rel_pc || a->parent != b->parent || a->module != b->module ||
		    keys_differ || i + after >= base->node_count)
			return mf_snap_fail(err, errlen,
					    "%s is not an earlier state of this file (node %" PRIu64
					    " differs)",
					    base->path, i);
	}
	struct mf_node *copy = malloc(p->node_count * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, p->nodes, p->node_count * sizeof(*copy));
	for (uint64_t i = 1, after = 0; mf_profile_peaks_lazy(p) && i < p->node_count;
	     i += 1 + after) {
		after = mf_profile_slots_after(p, &p->nodes[i]);
		if (p->nodes[i].module != MF_MODULE_ENTRY)
			continue;
		struct mf_life l; /* (nodes are aligned for 8-byte words: copied for the type) */
		mf_profile_life_get(p, copy, i, &l);
		mf_life_settle_record(&l, peak_id);
		mf_profile_life_put(p, copy, i, &l);
	}
	for (uint64_t i = 1, after = 0; i < base->node_count; i += 1 + after) {
		after = mf_profile_slots_after(base, &base->nodes[i]);
		copy[i].calls = mf_less(copy[i].calls, base->nodes[i].calls);
		copy[i].bytes = mf_less(copy[i].bytes, base->nodes[i].bytes);
		if (after)
			mf_records_subtract(copy, base, i);
	}
	if (p->map_len)
		munmap(p->map, p->map_len);
	else
		free(p->map);
	p->map = copy;
	p->map_len = 0;
	p->nodes = copy;
	struct mf_prof_header *h = &p->header;
	h->calls_total = mf_less(h->calls_total, base->header.calls_total);
	h->calls_lost = mf_less(h->calls_lost, base->header.calls_lost);
	h->calls_nested = mf_less(h->calls_nested, base->header.calls_nested);
	h->calls_off = mf_less(h->calls_off, base->header.calls_off);
	mf_timeline_subtract(p, base);
	return 0;
}

static int mf_snap_file_cmp(const void *a, const void *b)
{
	const struct mf_snap_file *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int mf_snap_file_vcmp(const void *a, const void *b)
{
	return strverscmp(((const struct mf_snap_file *)a)->name,
			  ((const struct mf_snap_file *)b)->name);
}

/* Adds name, read at dir/name, to st: 0 or -ENOMEM. A thread file that was packed after the
 * snapshot took it (the first record of its name at or after the snapshot's pack_len: no
 * thread packs while one is taken) goes by its record's name, so that it is one thread with
 * the record; named (`ended`, in home), it is read there (home, ended: its file is gone). So
 * does a named file whose thread the pack holds before pack_len too (its removal failed). */
static int mf_snap_state_add(struct mf_snap_state *st, size_t *cap, const char *dir,
			     const char *name, size_t len, unsigned rank, const struct mf_pack *pk,
			     uint64_t pack_len, int ended)
{
	char file[NAME_MAX + 1], packed[MF_PACK_READ_NAME];
	snprintf(file, sizeof(file), "%.*s", (int)len, name);
	const struct mf_pack_entry *e = pk ? mf_pack_after(pk, file, pack_len) : NULL;
	if (!e && pk && ended) /* (packed before, its file left too: read once, as its record) */
		e = mf_pack_of_file(pk, dir, file);
	if (e)
		mf_pack_entry_name(e, packed, sizeof(packed));
	struct mf_snap_file *f = mf_array_push(st->v, st->n, *cap);
	if (!f || !(f->name = strdup(e ? packed : file)) ||
	    asprintf(&f->path, "%s/%s", dir, e && ended ? packed : file) < 0) {
		if (f)
			free(f->name), f->name = NULL, f->path = NULL;
		return -ENOMEM;
	}
	f->rank = rank;
	return 0;
}

/* The thread files snapshot directory dir holds and names (in `ended`, read in home). */
static int mf_snap_state_dir(struct mf_snap_state *st, size_t *cap, const char *home,
			     const char *dir, unsigned rank, const struct mf_pack *pk,
			     uint64_t pack_len, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d)
		return mf_snap_fail(err, errlen, "%s: %s", dir, strerror(errno));
	struct dirent *e;
	int r = 0;
	while (!r && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 5 && !strcmp(e->d_name + len - 5, ".prof"))
			r = mf_snap_state_add(st, cap, dir, e->d_name, len, rank, pk, pack_len, 0);
	}
	closedir(d);
	if (r)
		return r;
	char path[PATH_MAX + 320];
	unsigned char *data;
	size_t size;
	snprintf(path, sizeof(path), "%s/ended", dir);
	if ((r = mf_read_file(path, (size_t)1 << 30, &data, &size)) == -ENOENT)
		return 0;
	if (r)
		return r == -ENOMEM ? r : mf_snap_fail(err, errlen, "%s: %s", path, strerror(-r));
	for (size_t at = 0; !r && at < size;) {
		const char *line = (const char *)data + at, *end = memchr(line, '\n', size - at);
		size_t len = end ? (size_t)(end - line) : size - at;
		at += len + 1;
		if (len <= 5 || len > NAME_MAX || memchr(line, '/', len) || memchr(line, 0, len) ||
		    memcmp(line + len - 5, ".prof", 5)) {
			r = mf_snap_fail(err, errlen, "%s: a line that names no thread file", path);
			break;
		}
		r = mf_snap_state_add(st, cap, home, line, len, rank, pk, pack_len, 1);
	}
	free(data);
	return r;
}

struct mf_snap_entry {
	unsigned long n;
	char *name;
};

static int mf_snap_entry_cmp(const void *a, const void *b)
{
	const struct mf_snap_entry *x = a, *y = b;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* home's snapshots by number, listed once for a whole chain (not once a step). */
static int mf_snap_entries(const char *home, struct mf_snap_entry **v, size_t *n, char *err,
			   size_t errlen)
{
	*v = NULL, *n = 0;
	size_t cap = 0;
	DIR *d = opendir(home);
	if (!d)
		return mf_snap_fail(err, errlen, "%s: %s", home, strerror(errno));
	struct dirent *e;
	int r = 0;
	while (!r && (e = readdir(d))) {
		const char *label;
		unsigned long k = mf_snap_number(e->d_name, &label);
		if (!k)
			continue;
		struct mf_snap_entry *x = mf_array_push(*v, *n, cap);
		if (!x || !(x->name = strdup(e->d_name)))
			r = -ENOMEM;
		else
			x->n = k;
	}
	closedir(d);
	if (*n)
		qsort(*v, *n, sizeof(**v), mf_snap_entry_cmp);
	return r;
}

int mf_snapshot_state(const char *home, const char *name, const struct mf_snapshot_record *rec,
		      struct mf_snap_state *st, char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	st->time_ns = rec->time_ns;
	size_t cap = 0, nsnaps = 0;
	struct mf_snap_entry *snaps = NULL;
	char dir[PATH_MAX + 256], path[PATH_MAX + 300];
	struct mf_snapshot_record at = *rec, prev;
	snprintf(dir, sizeof(dir), "%s/%s", home, name);
	int r = rec->builds_on ? mf_snap_entries(home, &snaps, &nsnaps, err, errlen) : 0;
	const struct mf_pack *pk = NULL;
	uint64_t pack_len = mf_snapshot_pack_len(rec);
	if (!r && mf_pack_upto(home, pack_len, rec->number, &pk))
		r = 1;
	/* (the threads packed before it: newer than any copy of them in the snapshots it builds
	 * on, and never in it) */
	for (size_t i = 0; pk && !r && i < pk->n; i++) {
		char packed[MF_PACK_READ_NAME];
		if (pk->v[i].offset >= pack_len)
			break;
		if (pk->v[i].same != i) /* (a repeat: said by mf_pack_of) */
			continue;
		mf_pack_entry_name(&pk->v[i], packed, sizeof(packed));
		r = mf_snap_state_add(st, &cap, home, packed, strlen(packed), 0, NULL, 0, 0);
	}
	for (unsigned rank = 0; !r; rank++) {
		if ((r = mf_snap_state_dir(st, &cap, home, dir, rank, pk, mf_snapshot_pack_len(&at),
					   err, errlen)) ||
		    !at.builds_on)
			break;
		struct mf_snap_entry key = {at.builds_on, NULL}, *x = NULL;
		if (at.builds_on <= ULONG_MAX)
			x = bsearch(&key, snaps, nsnaps, sizeof(*snaps), mf_snap_entry_cmp);
		if (!x) { /* (taken away: what it held is not known) */
			st->missing = at.builds_on;
			break;
		}
		const struct mf_snap_entry *twin = x > snaps && x[-1].n == x->n ? &x[-1]
						   : x + 1 < snaps + nsnaps && x[1].n == x->n
						       ? &x[1]
						       : NULL;
		char why[512];
		snprintf(path, sizeof(path), "%s/%s/snapshot", home, x->name);
		if (at.builds_on >= at.number) /* (each builds on an earlier one: the walk ends) */
			r = mf_snap_fail(err, errlen, "%s/snapshot: builds on a later snapshot",
					 dir);
		else if (twin)
			r = mf_snap_fail(
			    err, errlen,
			    "%s builds on snapshot %" PRIu64 ", and %s/%s and %s both "
			    "have that number: which one is meant is not known; rename "
			    "or remove the one that is not",
			    dir, at.builds_on, home, x->name, twin->name);
		else if (mf_read_snapshot(path, &prev, why, sizeof(why))) {
			/* (as if taken away: what it held is not known) */
			st->missing = at.builds_on;
			snprintf(st->missing_why, sizeof(st->missing_why), "%s: %s", path, why);
			break;
		} else if (prev.number != at.builds_on)
			r = mf_snap_fail(err, errlen, "%s: says it is snapshot %" PRIu64, path,
					 prev.number);
		else if (prev.pid != at.pid) /* (a chain never crosses processes) */
			r = mf_snap_fail(err, errlen,
					 "%s: a snapshot of process %" PRIu64 ", which %s (process "
					 "%" PRIu64 ") builds on: a chain never crosses processes",
					 path, prev.pid, name, rec->pid);
		at = prev;
		snprintf(dir, sizeof(dir), "%s/%s", home, x->name);
	}
	for (size_t i = 0; i < nsnaps; i++)
		free(snaps[i].name);
	free(snaps);
	if (r) {
		mf_snapshot_state_free(st);
		return r;
	}
	if (st->n)
		qsort(st->v, st->n, sizeof(*st->v), mf_snap_file_cmp);
	size_t k = 0;
	for (size_t i = 0; i < st->n; i++) {
		if (k && !strcmp(st->v[k - 1].name, st->v[i].name)) { /* (an older state of it) */
			free(st->v[i].name);
			free(st->v[i].path);
			continue;
		}
		st->v[k++] = st->v[i];
	}
	st->n = k;
	if (st->n)
		qsort(st->v, st->n, sizeof(*st->v), mf_snap_file_vcmp);
	return 0;
}

void mf_snapshot_say_missing(const char *home, const char *name, const struct mf_snap_state *st,
			     const char *so)
{
	if (st->missing_why[0])
		fprintf(stderr,
			"mf_print: %s/%s: builds on snapshot %" PRIu64
			", whose record cannot be read (%s): %s\n",
			home, name, st->missing, st->missing_why, so);
	else
		fprintf(stderr,
			"mf_print: %s/%s: builds on snapshot %" PRIu64 ", which is not there: %s\n",
			home, name, st->missing, so);
}

const struct mf_snap_file *mf_snapshot_state_find(const struct mf_snap_state *st, const char *name)
{
	struct mf_snap_file key = {.name = (char *)name};
	return st->n ? bsearch(&key, st->v, st->n, sizeof(*st->v), mf_snap_file_vcmp) : NULL;
}

void mf_snapshot_state_free(struct mf_snap_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i].name);
		free(st->v[i].path);
	}
	free(st->v);
	memset(st, 0, sizeof(*st));
}

void mf_snapshot_state_fix(const struct mf_snap_state *st, const struct mf_snap_file *f,
			   struct mf_profile *p)
{
	if (f->rank && p->header.state == MF_STATE_SNAPSHOT)
		p->header.end_ns = st->time_ns;
}

/* A snapshot's totals: its threads' recorded calls and bytes (scaled by their sampling). */
static int mf_snap_totals(const char *home, const char *name, const struct mf_snapshot_record *rec,
			  uint64_t *calls, uint64_t *bytes, int *estimated)
{
	*calls = *bytes = 0;
	struct mf_snap_state st;
	char err[512];
	int r = mf_snapshot_state(home, name, rec, &st, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r) {
		if (r < 0)
			fprintf(stderr, "mf_print: %s\n", err);
		return -1;
	}
	if (st.missing) {
		mf_snapshot_say_missing(home, name, &st,
					"its totals lack the threads that did not change since");
		r = -1;
	}
	for (size_t k = 0; k < st.n; k++) {
		const char *file = st.v[k].path;
		struct mf_profile p;
		int rp = mf_read_profile(file, &p, err, sizeof(err));
		if (rp > 0)
			continue;
		if (rp < 0) {
			fprintf(stderr, "mf_print: %s: %s\n", file, err);
			r = -1;
			continue;
		}
		if (p.cut) { /* (its totals are those of the nodes read) */
			fprintf(stderr, "mf_print: %s: %s\n", file, err);
			r = -1;
		}
		uint64_t rate = p.header.sample_rate ? p.header.sample_rate : 1;
		*estimated |= rate > 1;
		for (uint64_t i = 1; i < p.node_count; i++)
			if (p.nodes[i].module == MF_MODULE_ENTRY) {
				*calls += p.nodes[i].calls * rate;
				*bytes += p.nodes[i].bytes * rate;
			}
		mf_profile_free(&p);
	}
	mf_snapshot_state_free(&st);
	return r;
}

static int mf_name_vcmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

int mf_snapshot_list(FILE *out, const struct mf_found_list *found,
		     void (*name)(const char *dir, char *buf, size_t size, uint64_t *pid))
{
	int failed = 0;
	char path[PATH_MAX], err[512];
	fprintf(out, "%10s  %-23s %12s %11s  %s\n", "snapshot", "taken (UTC)", "calls", "bytes",
		"program pid  label, directory");
	for (size_t i = 0; i < found->count; i++) {
		const char *dir = found->v[i].dir;
		char prog[256], text[3 * sizeof(prog) + 8], who[sizeof(text) + 32];
		uint64_t pid;
		name(dir, prog, sizeof(prog), &pid);
		mf_text_escape(prog, text, sizeof(text));
		snprintf(who, sizeof(who), "%s %" PRIu64, text, pid);
		DIR *d = opendir(dir);
		if (!d) {
			fprintf(stderr, "mf_print: %s: %s\n", dir, strerror(errno));
			failed = 1;
			continue;
		}
		char **names = NULL;
		size_t n = 0, cap = 0;
		struct dirent *e;
		while ((e = readdir(d))) {
			const char *label;
			if (!mf_snap_number(e->d_name, &label))
				continue;
			if (n == cap) {
				char **v = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*v));
				if (!v) {
					closedir(d);
					return -ENOMEM;
				}
				names = v;
			}
			if (!(names[n] = strdup(e->d_name))) {
				closedir(d);
				return -ENOMEM;
			}
			n++;
		}
		closedir(d);
		if (n)
			qsort(names, n, sizeof(*names), mf_name_vcmp);
		if (!n)
			fprintf(out, "%10s  %s  %s: no snapshots\n", "-", who, dir);
		for (size_t k = 0; k < n; k++) {
			struct mf_snapshot_record rec;
			snprintf(path, sizeof(path), "%s/%s/snapshot", dir, names[k]);
			if (mf_read_snapshot(path, &rec, err, sizeof(err))) {
				fprintf(stderr, "mf_print: %s: %s\n", path, err);
				failed = 1;
				free(names[k]);
				continue;
			}
			uint64_t calls, bytes;
			int est = 0;
			snprintf(path, sizeof(path), "%s/%s", dir, names[k]);
			int tr = mf_snap_totals(dir, names[k], &rec, &calls, &bytes, &est);
			if (tr == -ENOMEM) {
				for (; k < n; k++)
					free(names[k]);
				free(names);
				return tr;
			}
			failed |= tr != 0;
			char when[32], b[32], label[3 * MF_SNAPSHOT_LABEL_LEN + 8];
			time_t t = (time_t)(rec.time_ns / 1000000000u);
			struct tm tm;
			gmtime_r(&t, &tm);
			snprintf(when + strftime(when, 20, "%Y-%m-%d %H:%M:%S", &tm), 5, ".%03u",
				 (unsigned)(rec.time_ns / 1000000u % 1000u));
			mf_text_bytes(b, sizeof(b), bytes);
			mf_text_escape(rec.label[0] ? rec.label : "-", label, sizeof(label));
			fprintf(out, "%10" PRIu64 "  %-23s %s%11" PRIu64 " %11s  %s  %s%s, %s\n",
				rec.number, when, est ? "~" : " ", calls, b, who, label,
				rec.flags & MF_SNAPSHOT_RESET ? " (reset)" : "", path);
			free(names[k]);
		}
		free(names);
	}
	return ferror(out) ? -EIO : failed;
}
