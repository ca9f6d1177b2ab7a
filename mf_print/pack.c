/* Reading a directory's pack (see pack.h): every record checked before it is used, the records
 * after the first bad one left (a process killed while writing it: nothing after it is
 * trusted), a packed thread's image laid out as its file was and read by the file's reader. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "pack.h"

/* Whether name is a thread file's: <tid>.prof or <tid>.<n>.prof. */
static int mf_pack_thread_name(const char *name, size_t len)
{
	size_t digits = strspn(name, "0123456789");
	if (!digits || len < digits + 5 || strcmp(name + len - 5, ".prof"))
		return 0;
	if (digits == len - 5)
		return 1;
	size_t more = strspn(name + digits + 1, "0123456789");
	return name[digits] == '.' && more && digits + 1 + more == len - 5;
}

/* The record at `at` of pk's bytes checked, e filled: 0; or what is wrong with it in why, and
 * -1 (-2: it is cut short by the pack's end, its name, if whole, in e->name). */
static int mf_pack_check_record(const struct mf_pack *pk, uint64_t at, struct mf_pack_entry *e,
				char *why, size_t whylen)
{
	struct mf_pack_record rec;
	struct mf_prof_header h;
	memset(e, 0, sizeof(*e));
	if (pk->size - at < sizeof(rec))
		return snprintf(why, whylen, "a record cut short (its start only)"), -2;
	memcpy(&rec, pk->data + at, sizeof(rec));
	if (memcmp(rec.magic, MF_PACK_MAGIC, sizeof(rec.magic)))
		return snprintf(why, whylen, "not a record (bad magic)"), -1;
	if (rec.byte_order != MF_BYTE_ORDER_MARK)
		return snprintf(why, whylen, "a record of the other byte order"), -1;
	if (rec.version > MF_FORMAT_VERSION)
		return snprintf(
			   why, whylen,
			   "a record of format version %u, newer than this mf_print reads (12 "
			   "to %u): read it with the mf_print of the malloc_freq that wrote it",
			   rec.version, MF_FORMAT_VERSION),
		       -1;
	if (rec.version < 12)
		return snprintf(why, whylen, "a record of format version %u (packs began with 12)",
				rec.version),
		       -1;
	if (rec.record_size != sizeof(rec) || rec.header_len < sizeof(h) ||
	    rec.header_len > MF_HEADER_SIZE || rec.header_len % 8 ||
	    rec.nodes_len % sizeof(struct mf_node) || rec.nodes_len > MF_PACK_IMAGE_MAX)
		return snprintf(why, whylen, "a record of wrong sizes"), -1;
	size_t len = strnlen(rec.name, sizeof(rec.name));
	if (len == sizeof(rec.name) || !mf_pack_thread_name(rec.name, len))
		return snprintf(why, whylen,
				"a record whose name (\"%.*s\") is not a thread file's "
				"(<tid>.prof)",
				(int)len, rec.name),
		       -1;
	memcpy(e->name, rec.name, len);
	if (pk->size - at - sizeof(rec) < rec.header_len + rec.nodes_len) {
		if (pk->size - at - sizeof(rec) >= sizeof(h)) {
			memcpy(&h, pk->data + at + sizeof(rec), sizeof(h));
			e->tid = h.tid, e->start_ns = h.start_ns, e->header_len = sizeof(h);
		}
		return snprintf(why, whylen, "a record cut short"), -2;
	}
	uint64_t check = rec.check;
	rec.check = 0;
	uint64_t sum = mf_hash_words(1, &rec, sizeof(rec));
	sum = mf_hash_words(sum, pk->data + at + sizeof(rec), rec.header_len + rec.nodes_len);
	if (sum != check)
		return snprintf(why, whylen, "a record whose check does not match (damaged)"), -1;
	memcpy(&h, pk->data + at + sizeof(rec), sizeof(h));
	if (h.header_size != MF_HEADER_SIZE || h.node_size != sizeof(struct mf_node) ||
	    h.node_count != rec.nodes_len / sizeof(struct mf_node))
		return snprintf(why, whylen, "a record whose thread file header does not fit it"),
		       -1;
	e->offset = at;
	e->header_len = rec.header_len;
	e->nodes_len = rec.nodes_len;
	e->tid = h.tid;
	e->start_ns = h.start_ns;
	return 0;
}

static const struct mf_pack *mf_pack_sorting;

static int mf_pack_name_cmp(const void *a, const void *b)
{
	const struct mf_pack_entry *x = &mf_pack_sorting->v[*(const size_t *)a],
				   *y = &mf_pack_sorting->v[*(const size_t *)b];
	int c = strcmp(x->name, y->name);
	return c ? c : x->offset < y->offset ? -1 : x->offset > y->offset;
}

int mf_pack_parse(const unsigned char *data, size_t size, struct mf_pack *out)
{
	memset(out, 0, sizeof(*out));
	out->data = data, out->size = size;
	size_t cap = 0;
	uint64_t at = 0;
	while (at < size) {
		struct mf_pack_entry e;
		char why[sizeof(out->damage) - 64];
		int bad = mf_pack_check_record(out, at, &e, why, sizeof(why));
		if (bad) {
			snprintf(out->damage, sizeof(out->damage),
				 "at offset %" PRIu64 " of %zu bytes, %s", at, size, why);
			if (bad == -2 && e.name[0]) /* (its file may be there still: pack.h) */
				out->cut = e;
			break;
		}
		struct mf_pack_entry *x = mf_array_push(out->v, out->n, cap);
		if (!x) {
			mf_pack_free(out);
			return -ENOMEM;
		}
		*x = e;
		x->same = out->n - 1;
		at += sizeof(struct mf_pack_record) + e.header_len + e.nodes_len;
	}
	out->good = at < size ? at : size;
	if (out->n && !(out->by_name = malloc(out->n * sizeof(*out->by_name)))) {
		mf_pack_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < out->n; i++)
		out->by_name[i] = i;
	mf_pack_sorting = out;
	if (out->n)
		qsort(out->by_name, out->n, sizeof(*out->by_name), mf_pack_name_cmp);
	/* (records of one name in offset order: a later one of the same thread repeats it) */
	for (size_t i = 1; i < out->n; i++) {
		struct mf_pack_entry *x = &out->v[out->by_name[i]];
		for (size_t j = i; j-- > 0;) {
			const struct mf_pack_entry *y = &out->v[out->by_name[j]];
			if (strcmp(x->name, y->name))
				break;
			if (y->same == out->by_name[j] && x->tid == y->tid &&
			    x->start_ns == y->start_ns) {
				x->same = out->by_name[j];
				if (!out->repeats++)
					out->repeat = out->by_name[i];
				break;
			}
		}
	}
	return 0;
}

void mf_pack_free(struct mf_pack *pk)
{
	free(pk->v);
	free(pk->by_name);
	memset(pk, 0, sizeof(*pk));
}

/* The packs read, by directory: a few, the oldest going first. */
enum { MF_PACKS_KEPT = 8 };
static struct mf_pack_kept {
	char *dir;
	struct mf_pack pack;
	int none; /* the directory has none (or it cannot be read: said) */
	int damaged;
	unsigned lost; /* a snapshot holds more of it than its records (said when 0) */
} mf_packs[MF_PACKS_KEPT];
static unsigned mf_packs_next;

static void mf_pack_kept_free(struct mf_pack_kept *k)
{
	if (k->pack.data)
		munmap((void *)k->pack.data, k->pack.size);
	mf_pack_free(&k->pack);
	free(k->dir);
	memset(k, 0, sizeof(*k));
}

/* dir's pack kept; NULL if none is. */
static struct mf_pack_kept *mf_pack_kept_find(const char *dir)
{
	for (unsigned i = 0; i < MF_PACKS_KEPT; i++)
		if (mf_packs[i].dir && !strcmp(mf_packs[i].dir, dir))
			return &mf_packs[i];
	return NULL;
}

const struct mf_pack *mf_pack_of(const char *dir, int *damaged)
{
	struct mf_pack_kept *k = mf_pack_kept_find(dir);
	if (!k) {
		k = &mf_packs[mf_packs_next++ % MF_PACKS_KEPT];
		mf_pack_kept_free(k);
		if (!(k->dir = strdup(dir)))
			return NULL;
		char path[PATH_MAX + 16];
		unsigned char *data = NULL;
		size_t size = 0;
		snprintf(path, sizeof(path), "%s/%s", dir, MF_PACK_NAME);
		int r = mf_map_file(path, (size_t)1 << 40, &data, &size);
		if (r == -ENOENT) {
			k->none = 1;
		} else if (r) {
			fprintf(stderr, "mf_print: %s: %s\n", path, strerror(-r));
			k->none = k->damaged = 1;
		} else if (mf_pack_parse(data, size, &k->pack)) {
			if (data)
				munmap(data, size);
			fprintf(stderr, "mf_print: %s: out of memory\n", path);
			k->none = k->damaged = 1;
		} else if (k->pack.damage[0] && mf_pack_cut_file(&k->pack, dir)) {
			k->pack.damage[0] = 0; /* (nothing lost: its file is read) */
		} else if (k->pack.damage[0]) {
			fprintf(stderr,
				"mf_print: warning: %s: %s; the %zu records before it are read, "
				"what follows is not\n",
				path, k->pack.damage, k->pack.n);
			k->damaged = 1;
		}
		if (k->pack.repeats) {
			const struct mf_pack_entry *x = &k->pack.v[k->pack.repeat];
			fprintf(stderr,
				"mf_print: warning: %s: the record at offset %" PRIu64
				" holds the thread of the one at offset %" PRIu64
				" (%s) again (%zu such in all); each thread is read once\n",
				path, x->offset, k->pack.v[x->same].offset, x->name,
				k->pack.repeats);
		}
	}
	if (damaged)
		*damaged |= k->damaged;
	return k->none ? NULL : &k->pack;
}

void mf_pack_drop(void)
{
	for (unsigned i = 0; i < MF_PACKS_KEPT; i++)
		mf_pack_kept_free(&mf_packs[i]);
}

int mf_pack_upto(const char *dir, uint64_t len, uint64_t number, const struct mf_pack **out)
{
	const struct mf_pack *pk = mf_pack_of(dir, NULL);
	struct mf_pack_kept *k = mf_pack_kept_find(dir);
	char path[PATH_MAX + 16];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, MF_PACK_NAME);
	int there = !stat(path, &st);
	/* (kept from before the snapshot was taken, and changed since: read again) */
	if (k && len > (pk ? pk->good : 0) &&
	    (there ? k->none || (uint64_t)st.st_size != k->pack.size : !k->none)) {
		mf_pack_kept_free(k);
		pk = mf_pack_of(dir, NULL);
		k = mf_pack_kept_find(dir);
	}
	*out = pk;
	if (len <= (pk ? pk->good : 0))
		return 0;
	if (!k || !k->lost++) {
		if (!pk)
			fprintf(stderr,
				"mf_print: %s: not there (or not readable), but snapshot "
				"%" PRIu64 " holds %" PRIu64
				" bytes of it: the threads packed in them are lost\n",
				path, number, len);
		else
			fprintf(stderr,
				"mf_print: %s: its records end at byte %" PRIu64
				", but snapshot %" PRIu64 " holds %" PRIu64
				" bytes of them: the threads packed after byte %" PRIu64
				" are lost (the pack was cut short, damaged or replaced)\n",
				path, pk->good, number, len, pk->good);
	}
	return -1;
}

void mf_pack_entry_name(const struct mf_pack_entry *e, char *buf, size_t size)
{
	snprintf(buf, size, "%s@%" PRIu64, e->name, e->offset);
}

int mf_pack_is_name(const char *name, uint64_t *offset)
{
	const char *at = strrchr(name, '@');
	if (!at || at - name <= 5 || memcmp(at - 5, ".prof", 5) || at[1] < '0' || at[1] > '9')
		return 0;
	char *end;
	unsigned long long v = strtoull(at + 1, &end, 10);
	if (*end)
		return 0;
	*offset = v;
	return 1;
}

/* The first of pk's records of file name, in pk->by_name (pk->n if none). */
static size_t mf_pack_first(const struct mf_pack *pk, const char *name)
{
	size_t lo = 0, hi = pk->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(pk->v[pk->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct mf_pack_entry *mf_pack_after(const struct mf_pack *pk, const char *name, uint64_t from)
{
	for (size_t i = mf_pack_first(pk, name);
	     i < pk->n && !strcmp(pk->v[pk->by_name[i]].name, name); i++)
		if (pk->v[pk->by_name[i]].offset >= from)
			return &pk->v[pk->v[pk->by_name[i]].same];
	return NULL;
}

const struct mf_pack_entry *mf_pack_same(const struct mf_pack *pk, const char *name, uint64_t tid,
					 uint64_t start_ns)
{
	for (size_t i = mf_pack_first(pk, name);
	     i < pk->n && !strcmp(pk->v[pk->by_name[i]].name, name); i++) {
		const struct mf_pack_entry *e = &pk->v[pk->by_name[i]];
		if (e->tid == tid && e->start_ns == start_ns)
			return &pk->v[e->same];
	}
	return NULL;
}

int mf_pack_profile(const struct mf_pack *pk, const struct mf_pack_entry *e, const char *path,
		    struct mf_profile *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	size_t size = MF_HEADER_SIZE + e->nodes_len;
	unsigned char *image = calloc(1, size);
	if (!image) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	const unsigned char *at = pk->data + e->offset + sizeof(struct mf_pack_record);
	memcpy(image, at, e->header_len);
	memcpy(image + MF_HEADER_SIZE, at + e->header_len, e->nodes_len);
	int r = mf_parse_profile(image, size, path, out, err, errlen);
	if (r || out->map) { /* (not taken, or copied) */
		free(image);
		return r;
	}
	out->map = image; /* (the nodes are its: freed with out) */
	out->map_len = 0;
	return 0;
}

int mf_pack_read(const char *path, struct mf_profile *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const char *slash = strrchr(path, '/');
	uint64_t offset;
	char dir[PATH_MAX];
	if (!slash || (size_t)(slash - path) >= sizeof(dir) ||
	    !mf_pack_is_name(slash + 1, &offset)) {
		snprintf(err, errlen, "not a packed thread's name");
		return -1;
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	const struct mf_pack *pk = mf_pack_of(dir, NULL);
	size_t lo = 0, hi = pk ? pk->n : 0;
	while (lo < hi) { /* (v is in offset order) */
		size_t mid = lo + (hi - lo) / 2;
		if (pk->v[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t len = strlen(slash + 1) - strlen(strrchr(slash + 1, '@'));
	if (!pk || lo == pk->n || pk->v[lo].offset != offset || strlen(pk->v[lo].name) != len ||
	    memcmp(pk->v[lo].name, slash + 1, len)) {
		snprintf(err, errlen, "no such record in %s/%s", dir, MF_PACK_NAME);
		return -1;
	}
	return mf_pack_profile(pk, &pk->v[lo], path, out, err, errlen);
}

int mf_pack_read_gone(const char *path, struct mf_profile *out, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], pack[PATH_MAX + 16];
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return 1;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	snprintf(pack, sizeof(pack), "%s/%s", dir, MF_PACK_NAME);
	unsigned char *data = NULL;
	size_t size = 0;
	struct mf_pack pk;
	if (mf_map_file(pack, (size_t)1 << 40, &data, &size) || mf_pack_parse(data, size, &pk)) {
		if (data)
			munmap(data, size);
		return 1;
	}
	const struct mf_pack_entry *last = NULL; /* (its newest: the thread just packed) */
	for (const struct mf_pack_entry *e = mf_pack_after(&pk, slash + 1, 0); e;
	     e = mf_pack_after(&pk, slash + 1, e->offset + 1))
		last = e;
	int r = last ? mf_pack_profile(&pk, last, path, out, err, errlen) : 1;
	mf_pack_free(&pk);
	if (data)
		munmap(data, size);
	return r;
}

/* The header of file dir/name, read into h: 0, or -errno. */
static int mf_pack_file_header(const char *dir, const char *name, struct mf_prof_header *h)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unsigned char *data;
	size_t size;
	int r = mf_map_file(path, (size_t)1 << 40, &data, &size);
	if (r)
		return r;
	if (size >= sizeof(*h))
		memcpy(h, data, sizeof(*h));
	else
		r = -EINVAL;
	if (data)
		munmap(data, size);
	return r;
}

const struct mf_pack_entry *mf_pack_of_file(const struct mf_pack *pk, const char *dir,
					    const char *name)
{
	struct mf_prof_header h;
	if (!mf_pack_after(pk, name, 0) || mf_pack_file_header(dir, name, &h) ||
	    h.state != MF_STATE_THREAD_EXIT)
		return NULL;
	return mf_pack_same(pk, name, h.tid, h.start_ns);
}

int mf_pack_cut_file(const struct mf_pack *pk, const char *dir)
{
	struct mf_prof_header h;
	const struct mf_pack_entry *c = &pk->cut;
	if (!c->name[0] || mf_pack_file_header(dir, c->name, &h) || h.state != MF_STATE_THREAD_EXIT)
		return 0;
	return !c->header_len || (h.tid == c->tid && h.start_ns == c->start_ns);
}

/* Whether dir's file name holds the same thread as one of pk's records. A file listed and gone
 * since, of a name the pack holds, was packed (pk was read after the listing). */
static int mf_pack_has_file(const struct mf_pack *pk, const char *dir, const char *name)
{
	struct mf_prof_header h;
	if (!mf_pack_after(pk, name, 0))
		return 0;
	if (mf_pack_file_header(dir, name, &h) == -ENOENT)
		return 1;
	return mf_pack_of_file(pk, dir, name) != NULL;
}

int mf_pack_add_names(const char *dir, char ***names, size_t *n)
{
	int damaged = 0;
	const struct mf_pack *pk = mf_pack_of(dir, &damaged);
	if (!pk)
		return damaged;
	size_t k = 0, cap = *n;
	for (size_t i = 0; i < *n; i++) {
		if (mf_pack_has_file(pk, dir, (*names)[i]))
			free((*names)[i]);
		else
			(*names)[k++] = (*names)[i];
	}
	*n = k;
	for (size_t i = 0; i < pk->n; i++) {
		char name[MF_PACK_READ_NAME];
		if (pk->v[i].same != i) /* (a repeat: its thread is read once, said) */
			continue;
		mf_pack_entry_name(&pk->v[i], name, sizeof(name));
		char **v = mf_array_room(*names, *n, &cap, sizeof(**names));
		if (!v)
			return -ENOMEM;
		*names = v;
		if (!((*names)[*n] = strdup(name)))
			return -ENOMEM;
		(*n)++;
	}
	return damaged;
}
