/* Reading and validating .prof files and module maps (see malloc_freq_format.h). Errors name
 * what is wrong; the caller names the file. No allocation larger than the file being read. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack.h"
#include "reader.h"

MF_FORMAT_ASSERT_LAYOUT();

#define MF_FILE_MAX ((size_t)1 << 40)

static int mf_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Opens a regular file of at most max bytes; its size in *size. A descriptor or -errno. */
static int mf_open_file(const char *path, size_t max, size_t *size)
{
	/* O_NONBLOCK: a FIFO planted under a profile's name must not hang us before the check */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	int e = fstat(fd, &st)		     ? errno
		: !S_ISREG(st.st_mode)	     ? EISDIR
		: (uint64_t)st.st_size > max ? EFBIG
					     : 0;
	if (e) {
		close(fd);
		return -e;
	}
	*size = (size_t)st.st_size;
	return fd;
}

int mf_map_file(const char *path, size_t max, unsigned char **data, size_t *size)
{
	int fd = mf_open_file(path, max, size);
	if (fd < 0)
		return fd;
	void *p = *size ? mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	int e = p == MAP_FAILED ? errno : 0;
	close(fd);
	*data = e ? NULL : p;
	return -e;
}

int mf_read_file(const char *path, size_t max, unsigned char **data, size_t *size)
{
	size_t cap, len = 0;
	int fd = mf_open_file(path, max, &cap);
	if (fd < 0)
		return fd;
	unsigned char *buf = malloc(cap ? cap : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	/* The file may still be growing (a live process): read what the size said. */
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*data = buf;
	*size = len;
	return 0;
}

static int mf_check_common(const char magic[8], const char *want, uint32_t version,
			   uint32_t byte_order, char *err, size_t errlen)
{
	if (memcmp(magic, want, 8))
		return mf_fail(err, errlen, "not a malloc_freq file (bad magic)");
	if (byte_order == __builtin_bswap32(MF_BYTE_ORDER_MARK))
		return mf_fail(err, errlen,
			       "written on a machine of the other byte order; read it there");
	if (byte_order != MF_BYTE_ORDER_MARK)
		return mf_fail(err, errlen, "corrupt header (byte-order mark 0x%08x)", byte_order);
	if (version > MF_FORMAT_VERSION)
		return mf_fail(
		    err, errlen,
		    "format version %u, newer than this mf_print reads (1 to %u): read it "
		    "with the mf_print of the malloc_freq that wrote it",
		    version, MF_FORMAT_VERSION);
	if (version < 1)
		return mf_fail(err, errlen, "corrupt header (format version 0)");
	return 0;
}

static const char *mf_errno_text(int e)
{
	return e == EISDIR ? "not a regular file" : e == EFBIG ? "too large" : strerror(e);
}

/* Checks that a file of size bytes holds at least header_size bytes. */
static int mf_check_size(size_t size, size_t header_size, char *err, size_t errlen)
{
	if (size >= header_size)
		return 0;
	if (size == 0)
		return mf_fail(err, errlen, "empty file");
	return mf_fail(err, errlen, "truncated: %zu bytes, the header needs %zu", size,
		       header_size);
}

/* Whether node x is all zeros: never written (only the root is so; a record's slots may be,
 * but they are no nodes). */
static int mf_node_unwritten(const struct mf_node *x)
{
	return !x->rel_pc && !x->parent && !x->module && !x->calls && !x->bytes;
}

/* Node i of nodes (a node, not a record) against its parent: its place in the tree and what
 * its kind allows. rec: which slots are records (version 4 on; NULL before). 0, or -1 with
 * why in err. */
static int mf_node_check(const struct mf_node *nodes, uint64_t i, const unsigned char *rec,
			 uint32_t version, char *err, size_t errlen)
{
	const struct mf_node *x = &nodes[i];
	if (x->parent >= i) {
		mf_fail(err, errlen, "corrupt node %llu (parent %u is not before it)",
			(unsigned long long)i, x->parent);
		return -1;
	}
	if (rec && rec[x->parent / 8] >> x->parent % 8 & 1) {
		mf_fail(err, errlen, "corrupt node %llu (parent %u is a record)",
			(unsigned long long)i, x->parent);
		return -1;
	}
	const struct mf_node *up = &nodes[x->parent];
	if (x->module == MF_MODULE_SIZES && version >= 4) {
		if (up->module != MF_MODULE_ENTRY || x->rel_pc || x->calls || x->bytes) {
			mf_fail(err, errlen, "corrupt node %llu (size histogram not of a leaf)",
				(unsigned long long)i);
			return -1;
		}
		return 0;
	}
	if ((x->module == MF_MODULE_WEIGHT) != (x->parent && up->module == MF_MODULE_ENTRY)) {
		mf_fail(err, errlen, "corrupt node %llu (%s)", (unsigned long long)i,
			x->module == MF_MODULE_WEIGHT ? "a time not under a leaf"
						      : "under an allocation leaf");
		return -1;
	}
	if (x->parent && (up->module == MF_MODULE_WEIGHT || up->module == MF_MODULE_SIZES)) {
		mf_fail(err, errlen, "corrupt node %llu (under a %s)", (unsigned long long)i,
			up->module == MF_MODULE_WEIGHT ? "time" : "size histogram");
		return -1;
	}
	if (x->module == MF_MODULE_ENTRY && x->rel_pc >= MF_ENTRY_COUNT) {
		mf_fail(err, errlen, "corrupt node %llu (entry point %llu)", (unsigned long long)i,
			(unsigned long long)x->rel_pc);
		return -1;
	}
	int under_tags = x->parent == 0 || up->module == MF_MODULE_TAG;
	if (x->module == MF_MODULE_TAG && (!under_tags || x->rel_pc >= MF_TAGS_MAX)) {
		mf_fail(err, errlen, "corrupt node %llu (a tag not under the root or a tag)",
			(unsigned long long)i);
		return -1;
	}
	if (x->module == MF_MODULE_TRUNCATED && !under_tags) {
		mf_fail(err, errlen, "corrupt node %llu (truncation mark below the root)",
			(unsigned long long)i);
		return -1;
	}
	if (x->module != MF_MODULE_ENTRY &&
	    (x->calls || (x->bytes && x->module != MF_MODULE_WEIGHT))) {
		mf_fail(err, errlen, "corrupt node %llu (counts on a frame that is not a leaf)",
			(unsigned long long)i);
		return -1;
	}
	if (x->module >= MF_MODULE_MAX && x->module != MF_MODULE_ENTRY &&
	    x->module != MF_MODULE_TRUNCATED && x->module != MF_MODULE_NONE &&
	    x->module != MF_MODULE_TAG && x->module != MF_MODULE_WEIGHT) {
		mf_fail(err, errlen, "corrupt node %llu (module %u)", (unsigned long long)i,
			x->module);
		return -1;
	}
	return 0;
}

/* A thread file's header, read from data (size bytes) into h and checked: the nodes the file
 * has room for in *room; a file cut short sets *cut to the nodes its header counts (with
 * why in err, not an error). 0, or -1 with why in err. */
static int mf_header_check(const unsigned char *data, size_t size, struct mf_prof_header *h,
			   uint64_t *room, uint64_t *cut, char *err, size_t errlen)
{
	if (mf_check_size(size, MF_HEADER_SIZE_V10, err, errlen))
		return -1;
	memcpy(h, data, sizeof(*h));
	if (mf_check_common(h->magic, MF_PROF_MAGIC, h->version, h->byte_order, err, errlen))
		return -1;
	uint32_t header_size = h->version >= 11 ? MF_HEADER_SIZE : MF_HEADER_SIZE_V10;
	if (h->header_size != header_size || h->node_size != sizeof(struct mf_node)) {
		mf_fail(err, errlen, "corrupt header (header size %u, node size %u)",
			h->header_size, h->node_size);
		return -1;
	}
	if (mf_check_size(size, header_size, err, errlen))
		return -1;
	if (h->state > MF_STATE_SNAPSHOT) {
		mf_fail(err, errlen, "corrupt header (state %u)", h->state);
		return -1;
	}
	if (h->sample_rate == 0) {
		mf_fail(err, errlen, "corrupt header (sample rate 0)");
		return -1;
	}
	*room = (size - header_size) / sizeof(struct mf_node);
	/* A file cut short (a copy that stopped) keeps the nodes before the cut: those are read,
	 * up to the last whole leaf record, and out->cut says so. */
	if (h->node_count > *room) {
		mf_fail(err, errlen, "truncated: the header counts %llu nodes, the file holds %llu",
			(unsigned long long)h->node_count, (unsigned long long)*room);
		if (!*room)
			return -1;
		*cut = h->node_count;
	}
	if (h->node_count > UINT32_MAX) {
		mf_fail(err, errlen, "corrupt header (%llu nodes)",
			(unsigned long long)h->node_count);
		return -1;
	}
	if (h->version < 4)
		h->records = 0; /* (reserved then) */
	if (h->version < 9) {	/* (reserved then) */
		h->timeline_count = h->timeline_records = 0;
		h->timeline_interval_ns = h->timeline_checked_ns = h->timeline_checked_calls = 0;
		h->timeline_checked_live = 0;
	}
	if (h->records & ~MF_RECORD_LIFE) {
		mf_fail(err, errlen, "corrupt header (records 0x%x)", h->records);
		return -1;
	}
	return 0;
}

/* The timeline records of a thread file's header (version 9; by entry point since version 11:
 * before, by_entry is zeros) into out. */
static void mf_timeline_parse(const unsigned char *data, const struct mf_prof_header *h,
			      struct mf_profile *out)
{
	uint32_t n =
	    h->timeline_count < MF_TIMELINE_RECORDS ? h->timeline_count : MF_TIMELINE_RECORDS;
	size_t size =
	    h->version >= 11 ? sizeof(struct mf_timeline_record) : MF_TIMELINE_RECORD_SIZE_V10;
	out->timeline_count = 0;
	for (uint32_t i = 0; h->version >= 9 && i < n; i++) {
		struct mf_timeline_record r = {0};
		memcpy(&r, data + MF_TIMELINE_OFFSET + i * size, size);
		const struct mf_timeline_record *last =
		    out->timeline_count ? &out->timeline[out->timeline_count - 1] : NULL;
		if (!r.time_ns || (last && (r.time_ns < last->time_ns || r.calls < last->calls)))
			continue;
		out->timeline[out->timeline_count++] = r;
	}
}

/* mapped: data is a file's mapping, whose pages are let go once checked. */
static int mf_parse_profile_in(const unsigned char *data, size_t size, const char *path,
			       struct mf_profile *out, char *err, size_t errlen, int mapped)
{
	memset(out, 0, sizeof(*out));
	struct mf_prof_header h; /* the header occupies a whole page */
	/* The writer creates the file, reserves its space, then writes the header, its magic
	 * last: a thread stopped in between (the process was killed), or a file read meanwhile,
	 * is an empty or all-zero file. */
	static const char zero[sizeof(h.magic)];
	if (size == 0 || (size >= sizeof(h.magic) && !memcmp(data, zero, sizeof(zero)))) {
		snprintf(err, errlen,
			 "%s: the thread was stopped while its file was being made; "
			 "nothing was recorded in it",
			 size ? "no header" : "empty");
		return 1;
	}
	uint64_t room;
	if (mf_header_check(data, size, &h, &room, &out->cut, err, errlen))
		return -1;
	/* A thread killed while its file was being made has a header but no root yet, and so
	 * no call counted. */
	uint64_t n = out->cut ? room : h.node_count;
	if (!n && h.calls_total) {
		mf_fail(err, errlen, "corrupt header (%llu calls, and no node)",
			(unsigned long long)h.calls_total);
		goto bad;
	}
	const struct mf_node *nodes = (const struct mf_node *)(data + h.header_size);
	struct mf_node *copy = NULL;
	if ((uintptr_t)nodes % _Alignof(struct mf_node)) {
		if (!(copy = malloc((n ? n : 1) * sizeof(*copy)))) {
			mf_fail(err, errlen, "out of memory for %llu nodes", (unsigned long long)n);
			goto bad;
		}
		memcpy(copy, nodes, n * sizeof(*copy));
		nodes = copy;
	}
	out->header.version = h.version; /* (for mf_profile_slots_after) */
	out->header.records = h.records;
	/* Version 4: which slots are records, not nodes (no node may name one its parent). */
	unsigned char *rec = h.version >= 4 ? calloc(n / 8 + 1, 1) : NULL;
	if (h.version >= 4 && !rec) {
		mf_fail(err, errlen, "out of memory for %llu nodes", (unsigned long long)n);
		goto bad_nodes;
	}
	struct mf_profile checked = {
	    .nodes = nodes, .map = (void *)data, .map_len = mapped ? size : 0};
	for (uint64_t i = 1, after, mark = 0; i < n; i += 1 + after) {
		const struct mf_node *x = &nodes[i];
		mf_profile_release_behind(&checked, &mark, i);
		if (mf_node_unwritten(x)) {
			mf_fail(
			    err, errlen,
			    "the header counts %llu nodes, the file holds %llu (node %llu on is "
			    "zeros, never written)",
			    (unsigned long long)h.node_count, (unsigned long long)i,
			    (unsigned long long)i);
			out->cut = h.node_count;
			out->zeros = 1;
			n = i;
			break;
		}
		after = mf_profile_slots_after(out, x);
		if (after > n - 1 - i && out->cut) {
			n = i;
			break;
		}
		if (after > n - 1 - i) {
			mf_fail(err, errlen, "corrupt node %llu (its record is cut short)",
				(unsigned long long)i);
			goto bad_nodes;
		}
		for (uint64_t k = i + 1; k <= i + after; k++)
			rec[k / 8] |= (unsigned char)(1u << k % 8);
		if (mf_node_check(nodes, i, rec, h.version, err, errlen))
			goto bad_nodes;
	}
	if (n && (nodes[0].calls || nodes[0].parent || nodes[0].module)) {
		mf_fail(err, errlen, "corrupt root node");
		goto bad_nodes;
	}
	free(rec);
	rec = NULL;
	h.thread_name[MF_THREAD_NAME_LEN - 1] = 0;
	out->path = strdup(path);
	if (!out->path) {
		free(copy);
		return mf_fail(err, errlen, "out of memory");
	}
	out->header = h;
	mf_timeline_parse(data, &h, out);
	out->node_count = n;
	out->nodes = nodes;
	out->map = copy;
	out->zeros = out->zeros && out->cut;
	out->complete = h.state == MF_STATE_THREAD_EXIT || h.state == MF_STATE_PROCESS_EXIT ||
			h.state == MF_STATE_SNAPSHOT; /* (a copy: complete as of its moment) */
	return 0;
bad_nodes:
	free(rec);
	free(copy);
bad:
	return -1;
}

int mf_parse_profile(const unsigned char *data, size_t size, const char *path,
		     struct mf_profile *out, char *err, size_t errlen)
{
	return mf_parse_profile_in(data, size, path, out, err, errlen, 0);
}

int mf_read_profile(const char *path, struct mf_profile *out, char *err, size_t errlen)
{
	unsigned char *data;
	size_t size;
	uint64_t offset;
	const char *base = strrchr(path, '/');
	if (mf_pack_is_name(base ? base + 1 : path, &offset)) /* (a packed thread's) */
		return mf_pack_read(path, out, err, errlen);
	memset(out, 0, sizeof(*out));
	int r = mf_map_file(path, MF_FILE_MAX, &data, &size);
	int gone = r == -ENOENT ? mf_pack_read_gone(path, out, err, errlen) : 1;
	if (gone <= 0) /* (packed since it was listed) */
		return gone;
	if (r)
		return mf_fail(err, errlen, "%s", mf_errno_text(-r));
	r = mf_parse_profile_in(data, size, path, out, err, errlen, 1);
	if (r || out->map) { /* (a mapping is page-aligned: nodes are never copied from it) */
		if (data)
			munmap(data, size);
		return r;
	}
	out->map = data;
	out->map_len = size;
	return 0;
}

void mf_profile_release(struct mf_profile *p, uint64_t from, uint64_t upto)
{
	if (!p->map_len)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)(p->nodes + from) & ~(uintptr_t)(page - 1);
	uintptr_t end = (uintptr_t)(p->nodes + upto) & ~(uintptr_t)(page - 1);
	if (start < (uintptr_t)p->map)
		start = (uintptr_t)p->map;
	if (end > start)
		madvise((void *)start, end - start, MADV_DONTNEED);
}

void mf_profile_release_behind(struct mf_profile *p, uint64_t *mark, uint64_t node)
{
	if (node - *mark >= (1u << 18)) {
		mf_profile_release(p, *mark, node);
		*mark = node;
	}
}

int mf_profile_check_modules(struct mf_profile *p, uint32_t count, char *err, size_t errlen)
{
	uint64_t mark = 0;
	for (uint64_t i = 1; i < p->node_count; i += 1 + mf_profile_slots_after(p, &p->nodes[i])) {
		mf_profile_release_behind(p, &mark, i);
		uint32_t m = p->nodes[i].module;
		if (m < MF_MODULE_MAX && m >= count)
			return mf_fail(err, errlen,
				       "node %llu names module %u, the module map has %u",
				       (unsigned long long)i, m, count);
	}
	return 0;
}

void mf_profile_free(struct mf_profile *p)
{
	free(p->path);
	if (p->map_len)
		munmap(p->map, p->map_len);
	else
		free(p->map);
	memset(p, 0, sizeof(*p));
}

int mf_parse_modules(const unsigned char *data, size_t size, struct mf_modmap *out, char *err,
		     size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct mf_modules_header h;
	if (mf_check_size(size, sizeof(h), err, errlen))
		return -1;
	memcpy(&h, data, sizeof(h));
	if (mf_check_common(h.magic, MF_MODULES_MAGIC, h.version, h.byte_order, err, errlen))
		goto bad;
	size_t record = h.version == 1 ? sizeof(struct mf_module) : sizeof(struct mf_module_record);
	if (h.record_size != record) {
		mf_fail(err, errlen, "corrupt header (record size %u)", h.record_size);
		goto bad;
	}
	/* A map cut short keeps the modules before the cut (out->cut). */
	uint32_t count = h.count;
	if ((size - sizeof(h)) / record < h.count) { /* (version 2: at least) */
		mf_fail(err, errlen, "truncated: the header counts %u modules, the file holds %zu",
			h.count, (size - sizeof(h)) / record);
		out->cut = h.count;
		count = (uint32_t)((size - sizeof(h)) / record);
	}
	out->mods =
	    calloc(count ? count : 1, sizeof(struct mf_module)); /* (count: what the file holds) */
	if (!out->mods) {
		mf_fail(err, errlen, "out of memory");
		goto bad;
	}
	size_t at = sizeof(h);
	uint32_t i = 0;
	for (; i < count; i++) {
		struct mf_module *m = &out->mods[i];
		if (h.version == 1) {
			memcpy(m, data + at, sizeof(*m));
			at += sizeof(*m);
			m->path[MF_PATH_LEN - 1] = 0;
		} else {
			struct mf_module_record r;
			if (size - at < sizeof(r)) {
				mf_fail(err, errlen, "truncated: module %u of %u is cut short", i,
					h.count);
				out->cut = h.count;
				break;
			}
			memcpy(&r, data + at, sizeof(r));
			at += sizeof(r);
			size_t len = r.path_len, padded = len + MF_MODULE_PATH_PAD(len);
			if (len >= MF_PATH_LEN) {
				mf_fail(err, errlen, "corrupt module %u (path of %u bytes)", i,
					r.path_len);
				goto bad;
			}
			if (size - at < padded) {
				mf_fail(err, errlen,
					"truncated: the path of module %u is cut short", i);
				out->cut = h.count;
				break;
			}
			m->bias = r.bias, m->start = r.start, m->end = r.end, m->loaded = r.loaded;
			m->build_id_len = r.build_id_len;
			memcpy(m->build_id, r.build_id, MF_BUILD_ID_LEN);
			memcpy(m->path, data + at, len);
			m->path[len] = 0;
			at += padded;
		}
		if (m->build_id_len > MF_BUILD_ID_LEN)
			m->build_id_len = 0;
	}
	out->count = i;
	return 0;
bad:
	free(out->mods);
	out->mods = NULL;
	return -1;
}

int mf_read_modules(const char *path, struct mf_modmap *out, char *err, size_t errlen)
{
	unsigned char *data;
	size_t size;
	memset(out, 0, sizeof(*out));
	int r = mf_read_file(path, MF_FILE_MAX, &data, &size);
	if (r)
		return mf_fail(err, errlen, "%s", mf_errno_text(-r));
	r = mf_parse_modules(data, size, out, err, errlen);
	free(data);
	return r;
}

void mf_modmap_free(struct mf_modmap *m)
{
	free(m->mods);
	memset(m, 0, sizeof(*m));
}

int mf_parse_process(const unsigned char *data, size_t size, struct mf_process_record *out,
		     char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (mf_check_size(size, sizeof(*out), err, errlen))
		return -1;
	memcpy(out, data, sizeof(*out));
	struct mf_process_record *r = out;
	if (mf_check_common(r->magic, MF_PROCESS_MAGIC, r->version, r->byte_order, err, errlen))
		return -1;
	if (r->version < 3 || r->record_size != MF_PROCESS_SIZE)
		return mf_fail(err, errlen, "corrupt header (version %u, record size %u)",
			       r->version, r->record_size);
	if (r->state < MF_PROCESS_RUNNING || r->state > MF_PROCESS_SIGNALED)
		return mf_fail(err, errlen, "corrupt record (state %u)", r->state);
	if (r->cmdline_len > MF_CMDLINE_LEN || r->exe_len >= MF_PATH_LEN)
		return mf_fail(err, errlen,
			       "corrupt record (command line of %u bytes, executable "
			       "of %u)",
			       r->cmdline_len, r->exe_len);
	r->exe[r->exe_len] = 0;
	r->exec_from[MF_EXEC_FROM_LEN - 1] = 0;
	if (r->cmdline_len)
		r->cmdline[r->cmdline_len - 1] = 0;
	return 0;
}

int mf_read_process(const char *path, struct mf_process_record *out, char *err, size_t errlen)
{
	unsigned char *data;
	size_t size;
	memset(out, 0, sizeof(*out));
	int r = mf_read_file(path, MF_PROCESS_SIZE * 4, &data, &size);
	if (r)
		return mf_fail(err, errlen, "%s", mf_errno_text(-r));
	r = mf_parse_process(data, size, out, err, errlen);
	free(data);
	return r;
}
