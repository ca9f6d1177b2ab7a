/* The on-disk format round trip: the library's own writer (profile_file.c, trie.c, modules.c,
 * process.c) records known stacks into a real file, mf_print's reader reads it back, and
 * everything must agree: header fields, every node, and the calls and bytes of every stack.
 * Also forces the file to grow several times; the module map must say what the loader says of
 * every object, one of them loaded through a path 4000 bytes long; and the process record must
 * say who this process is, then how it ended, and an exec'd image's what it replaced. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/fork.h"
#include "../../lib/life/life.h"
#include "../../lib/loaded.h"
#include "../../lib/mf_internal.h"
#include "../../lib/thread.h"
#include "../../lib/trie.h"
#include "../../mf_print/reader.h"
#include "../tap.h"

/* The thread file at path (read as p) rewritten as version 10 wrote it (a one-page header,
 * timeline records of 64 bytes) reads the same, with no calls by entry point. */
static void v10_reads(const char *path, const struct mf_profile *p)
{
	FILE *in = fopen(path, "rb");
	static unsigned char b[1 << 24], old[1 << 24];
	size_t n = in ? fread(b, 1, sizeof(b), in) : 0;
	if (in)
		fclose(in);
	if (n < MF_HEADER_SIZE)
		tap_bail("cannot read the thread file back");
	memcpy(old, b, MF_TIMELINE_OFFSET);
	memset(old + MF_TIMELINE_OFFSET, 0, MF_HEADER_SIZE_V10 - MF_TIMELINE_OFFSET);
	for (unsigned i = 0; i < MF_TIMELINE_RECORDS; i++)
		memcpy(old + MF_TIMELINE_OFFSET + i * MF_TIMELINE_RECORD_SIZE_V10,
		       b + MF_TIMELINE_OFFSET + i * sizeof(struct mf_timeline_record),
		       MF_TIMELINE_RECORD_SIZE_V10);
	memcpy(old + MF_HEADER_SIZE_V10, b + MF_HEADER_SIZE, n - MF_HEADER_SIZE);
	struct mf_prof_header *h = (struct mf_prof_header *)old;
	h->version = 10;
	h->header_size = MF_HEADER_SIZE_V10;
	char v10[4300], err[256] = "";
	snprintf(v10, sizeof(v10), "%s.v10", path);
	FILE *out = fopen(v10, "wb");
	if (!out ||
	    fwrite(old, 1, n - (MF_HEADER_SIZE - MF_HEADER_SIZE_V10), out) !=
		n - (MF_HEADER_SIZE - MF_HEADER_SIZE_V10) ||
	    fclose(out))
		tap_bail("cannot write the version 10 file");
	struct mf_profile q;
	int r = mf_read_profile(v10, &q, err, sizeof(err));
	int zeros = 1;
	for (int e = 0; !r && e < MF_ENTRY_COUNT; e++)
		zeros =
		    zeros && !q.timeline[0].by_entry[e].calls && !q.timeline[0].by_entry[e].bytes;
	tap_ok(!r && q.header.version == 10 && q.node_count == p->node_count &&
		   !memcmp(q.nodes, p->nodes, p->node_count * sizeof(*p->nodes)) &&
		   q.timeline_count == 1 && q.timeline[0].calls == 640 &&
		   q.timeline[0].bytes == p->timeline[0].bytes &&
		   q.timeline[0].time_ns == p->timeline[0].time_ns && zeros,
	       "a version 10 file (one-page header, 64-byte records) reads: its nodes, its one "
	       "record, no calls by entry point %s",
	       err);
	if (!r)
		mf_profile_free(&q);
	unlink(v10);
}

/* What the module map tells stack capture (code was unloaded): nothing to forget here; and
 * the thread state it reads (whether signals are blocked already). */
void mf_unwind_forget(void) {}
MF_TLS struct mf_tls mf_tls;
pthread_rwlock_t mf_fork_lock = PTHREAD_RWLOCK_INITIALIZER;
unsigned mf_fork_pending;
void mf_fork_wait(void) {}
int mf_life_on; /* (lifetimes off: lib/life/ is not linked) */
/* (no seccomp strict mode here: lib/confine.c is not linked) */
MF_TLS int mf_confined;
pid_t mf_confine_pid(void)
{
	return getpid();
}

#define STACKS 3000

/* Frames here are fake addresses; resolve maps them to module 0 at offset pc - 0x1000. */
/* The file's growth as a thread makes it: room in the file, then the mapping. */
/* timeline.c reads the process's live bytes for a file with lifetimes; this one has none */
uint64_t mf_life_live_now(void)
{
	return 0;
}

static struct mf_node *grow(void *file, uint64_t *capacity)
{
	return mf_prof_extend(file) ? NULL : mf_prof_grow(file, capacity);
}

static void resolve(uintptr_t pc, struct mf_node *node)
{
	node->module = 0;
	node->rel_pc = pc - 0x1000;
}

/* A copy of the test plugin (tests/progs/.libs/plugin.so) at dir/aaa.../aaa.../libmf_long.so, the
 * whole path 4000 bytes; the path goes to out. 0 or -1. */
static int mf_long_copy(const char *dir, char *out, size_t size)
{
	char seg[201];
	memset(seg, 'a', 200);
	seg[200] = 0;
	size_t n = (size_t)snprintf(out, size, "%s", dir);
	while (n + 201 + 20 < 4000) {
		n += (size_t)snprintf(out + n, size - n, "/%s", seg);
		if (mkdir(out, 0755) && errno != EEXIST)
			return -1;
	}
	int pad = (int)(4000 - n - strlen("/libmf_long.so"));
	n += (size_t)snprintf(out + n, size - n, "/%.*s", pad - 1, seg);
	if (mkdir(out, 0755) && errno != EEXIST)
		return -1;
	snprintf(out + n, size - n, "/libmf_long.so");
	char plugin[4200];
	snprintf(plugin, sizeof(plugin), "%s/.libs/plugin.so",
		 getenv("MF_TESTS") ? getenv("MF_TESTS") : "tests/progs");
	int in = open(plugin, O_RDONLY);
	int to = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	char buf[65536];
	ssize_t r = in < 0 || to < 0 ? -1 : 0;
	while (r >= 0 && (r = read(in, buf, sizeof(buf))) > 0)
		if (write(to, buf, (size_t)r) != r)
			r = -1;
	if (in >= 0)
		close(in);
	if (to >= 0)
		close(to);
	return r < 0 ? -1 : 0;
}

/* Every object the loader reports must be in the map, loaded, with its bias, extent and
 * path (the program's and the vdso's are named otherwise). */
struct mf_check {
	const struct mf_modmap *m;
	int objects, found;
};

static int mf_check_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_check *c = arg;
	const char *name = info->dlpi_name;
	c->objects++;
	if (!name || !*name)
		return c->found++, 0; /* the program or the vdso: checked by name below */
	for (uint32_t i = 0; i < c->m->count; i++) {
		const struct mf_module *r = &c->m->mods[i];
		uintptr_t lo = UINTPTR_MAX;
		for (int k = 0; k < info->dlpi_phnum; k++)
			if (info->dlpi_phdr[k].p_type == PT_LOAD &&
			    info->dlpi_addr + info->dlpi_phdr[k].p_vaddr < lo)
				lo = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr;
		if (r->loaded && r->bias == info->dlpi_addr && r->start == lo &&
		    !strcmp(r->path, name)) {
			c->found++;
			break;
		}
	}
	return 0;
}

/* The trie's index doubles where it lies and never wraps: keys whose homes are the last 16 of
 * every size up to 64 Ki homes (their path hashes' low 16 bits 0xfff0 or more) crowd its end
 * and spill into its tail, where they are found, and again after each doubling (in the room,
 * out of it, in a grown mapping; or in mappings from the first), with every other key. A room
 * full of stale bytes is no matter, and the memo beside the index in the room stays as it was
 * when the index leaves. */
static void index_tail(int with_room)
{
	enum { CROWD = 40, STACKS_ = 30, OTHERS = 20000 };
	enum { NODES = 1 + CROWD + STACKS_ * (3 + MF_LEAF_SLOTS) + OTHERS };
	static uintptr_t crowd[CROWD];
	static uint32_t crowd_node[CROWD], other_node[OTHERS];
	int n = 0;
	for (uintptr_t pc = 0x100000; n < CROWD; pc += 16)
		if ((mf_trie_hash(0, pc) & 0xffff) >= 0xfff0)
			crowd[n++] = pc;
	struct mf_node *nodes = calloc(NODES, sizeof(*nodes));
	struct mf_trie_room *room = with_room ? aligned_alloc(4096, sizeof(*room)) : NULL;
	if (room)
		memset(room, 0xff, sizeof(*room));
	uint64_t count = 0;
	struct mf_trie t;
	if (!nodes || (with_room && !room) ||
	    mf_trie_init(&t, room, nodes, NODES, &count, NULL, resolve, NULL))
		tap_bail("cannot set up a trie");
	const char *where = with_room ? "from a room" : "in mappings";
	for (int i = 0; i < CROWD; i++)
		crowd_node[i] = mf_trie_child(&t, 0, crowd[i]);
	int in_tail = 0;
	for (int i = 0; i < MF_TRIE_INDEX_TAIL; i++)
		in_tail += t.index[t.index_mask + 1 + i].node != 0;
	tap_ok(t.index_mask + 1 == MF_TRIE_INDEX_MIN && in_tail >= CROWD - 16,
	       "%s: %d keys homed in the last 16 of %llu homes, %d of them in the tail", where,
	       CROWD, (unsigned long long)t.index_mask + 1, in_tail);
	for (int i = 0; i < STACKS_; i++) { /* (stacks in the memo) */
		void *pcs[2] = {(void *)(0x2000000 + 16 * (uintptr_t)i), (void *)0x3000000};
		mf_trie_stack(&t, pcs, 2, 0, MF_TRIE_KEY_ENTRY(0), 0, NULL, NULL);
	}
	static struct mf_trie_memo memo[MF_TRIE_MEMO_SLOTS];
	uint64_t memo_slots = t.memo_mask + 1, used = t.index_used;
	memcpy(memo, t.memo, memo_slots * sizeof(*memo));
	int found = 1, sizes = 0, moves = 0;
	uint64_t homes = t.index_mask + 1, first = homes;
	const struct mf_trie_slot *before = NULL; /* (an index with a page taken after it) */
	void *guard = MAP_FAILED;
	for (int k = 0; k < OTHERS; k++) {
		other_node[k] = mf_trie_child(&t, 0, 0x4000000 + 16 * (uintptr_t)k);
		if (t.index_mask + 1 == homes)
			continue;
		homes = t.index_mask + 1; /* (it doubled: every key so far is found as it was) */
		sizes++;
		moves += before && t.index != before;
		before = NULL;
		if (guard != MAP_FAILED)
			munmap(guard, 4096);
		guard = MAP_FAILED;
		if (homes > MF_TRIE_INDEX_ROOM && homes < 1 << 15) {
			/* The page after its mapping taken (by this, or by another mapping
			 * already): the next doubling must move it. */
			uintptr_t end =
			    ((uintptr_t)t.index +
			     (homes + MF_TRIE_INDEX_TAIL) * sizeof(struct mf_trie_slot) + 4095) &
			    ~(uintptr_t)4095;
			guard =
			    mmap((void *)end, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (guard != (void *)end && guard != MAP_FAILED)
				munmap(guard, 4096), guard = MAP_FAILED; /* (placed elsewhere) */
			before = t.index;
		}
		for (int i = 0; i < CROWD; i++)
			found = found && mf_trie_child(&t, 0, crowd[i]) == crowd_node[i];
		for (int j = 0; j <= k; j++)
			found = found && mf_trie_child(&t, 0, 0x4000000 + 16 * (uintptr_t)j) ==
					     other_node[j];
	}
	in_tail = 0;
	for (int i = 0; i < MF_TRIE_INDEX_TAIL; i++)
		in_tail += t.index[t.index_mask + 1 + i].node != 0;
	tap_ok(moves > 0, "%s: the index moved by mremap %d times, a page taken after it", where,
	       moves);
	tap_ok(found && (first << sizes) == 1 << 16 && t.index_mask + 1 == 1 << 16 &&
		   count == NODES && t.index_used == used + OTHERS && in_tail >= CROWD - 16 &&
		   t.memo_mask + 1 == memo_slots &&
		   !memcmp(memo, t.memo, memo_slots * sizeof(*memo)),
	       "%s: %d doublings to %llu homes, each key found as it was after each, no node "
	       "added, none dropped (%llu indexed, %d in the tail), the memo as it was",
	       where, sizes, (unsigned long long)t.index_mask + 1, (unsigned long long)t.index_used,
	       in_tail);
	mf_trie_destroy(&t);
	free(room);
	free(nodes);
}

int main(void)
{
	char dir[] = "/tmp/mf_format.XXXXXX";
	if (!mkdtemp(dir))
		tap_bail("mkdtemp");
	setenv("MALLOC_FREQ_DIR", dir, 1);
	setenv("MALLOC_FREQ_TIMELINE", "0.001", 1); /* (a record a millisecond: version 9) */
	mf_config_load();
	mf_modules_init();
	tap_ok(mf_prof_dir_ensure() == 0, "the writer creates the process directory");
	struct mf_prof_file f;
	memset(&f, 0, sizeof(f));
	tap_ok(mf_prof_open(&f, 4242) == 0, "the writer creates a thread file");
	/* (format 11: the header's pages after the first are not reserved before a timeline
	 * record reaches them: a hole, which costs no disk) */
	struct stat made;
	int made_ok = !stat(f.path, &made);
	tap_ok(made_ok && made.st_size >= MF_HEADER_SIZE &&
		   (off_t)made.st_blocks * 512 + (MF_HEADER_SIZE - MF_HEADER_SIZE_V10) <=
		       made.st_size,
	       "... its header's pages after the first a hole (%lld bytes on disk of %lld)",
	       (long long)made.st_blocks * 512, (long long)made.st_size);
	struct mf_trie t;
	struct mf_trie_room *room = aligned_alloc(4096, sizeof(*room));
	tap_ok(room && mf_trie_init(&t, room, f.nodes, f.capacity, &f.header->node_count, grow,
				    resolve, &f) == 0,
	       "the trie is set up over the file, its index in a room");
	static uint32_t leaf[STACKS];
	uint64_t grow_before = f.capacity;
	for (int s = 0; s < STACKS; s++) {
		/* Stacks of depth 1..8 sharing prefixes: main -> f(s%7) -> ... */
		uint32_t node = 0;
		int depth = 1 + s % 8;
		if (s % 100 == 99)
			node = mf_trie_child(&t, 0, MF_TRIE_KEY_TRUNCATED);
		for (int d = 0; d < depth; d++)
			node = mf_trie_child(
			    &t, node, 0x1000 + 16 * (uintptr_t)(d == 0 ? 1 : (s * 31 + d) % 997));
		leaf[s] = mf_trie_child(&t, node, MF_TRIE_KEY_ENTRY(s % MF_ENTRY_COUNT));
		t.nodes[leaf[s]].calls += (uint64_t)s + 1;
		t.nodes[leaf[s]].bytes += 8 * ((uint64_t)s + 1);
	}
	tap_ok(f.capacity > grow_before * 4, "the file grew (from %llu to %llu nodes)",
	       (unsigned long long)grow_before, (unsigned long long)f.capacity);
	uint32_t again = 0;
	for (int d = 0; d < 1; d++)
		again = mf_trie_child(&t, again, 0x1000 + 16);
	tap_ok(again == t.nodes[leaf[0]].parent, "a known path finds its node again");
	uint64_t nodes_before = *t.count;
	int same = 1;
	for (int s = 0; s < STACKS; s++) { /* every stack again, through the grown index */
		uint32_t node = s % 100 == 99 ? mf_trie_child(&t, 0, MF_TRIE_KEY_TRUNCATED) : 0;
		for (int d = 0; d < 1 + s % 8; d++)
			node = mf_trie_child(
			    &t, node, 0x1000 + 16 * (uintptr_t)(d == 0 ? 1 : (s * 31 + d) % 997));
		same = same &&
		       mf_trie_child(&t, node, MF_TRIE_KEY_ENTRY(s % MF_ENTRY_COUNT)) == leaf[s];
	}
	tap_ok(same && *t.count == nodes_before,
	       "every stack again finds its leaf, no node added (%llu nodes)",
	       (unsigned long long)nodes_before);
	tap_ok(t.index_mask + 1 > MF_TRIE_INDEX_ROOM,
	       "the index outgrew its room (%llu slots) for one of its own",
	       (unsigned long long)t.index_mask + 1);
	/* The timeline, as the thread's own looks at the clock write it (timeline.c) */
	f.header->calls_total = 640;
	nanosleep(&(struct timespec){0, 10000000}, NULL); /* (past the coarse clock's tick) */
	mf_timeline_look(&f, t.leaf_slots);
	f.header->calls_total = 704; /* (a second look within the interval, however slow the
				      * machine: an hour's for it alone) */
	uint64_t interval = f.header->timeline_interval_ns;
	f.header->timeline_interval_ns = 3600 * 1000000000ull;
	mf_timeline_look(&f, t.leaf_slots);
	f.header->timeline_interval_ns = interval;
	struct mf_timeline_record rec0 =
	    ((struct mf_timeline_record *)((char *)f.header + MF_TIMELINE_OFFSET))[0];
	uint32_t f_timeline_count = f.header->timeline_count;
	mf_prof_finalize(f.header, MF_STATE_THREAD_EXIT, 4242);
	uint64_t written = f.header->node_count;
	f.header->calls_off = 12345; /* (version 4: calls made while recording was off) */
	struct mf_node *copy = malloc(written * sizeof(*copy));
	memcpy(copy, f.nodes, written * sizeof(*copy));
	char path[4200];
	snprintf(path, sizeof(path), "%s", f.path);
	mf_trie_destroy(&t);
	free(room);
	mf_prof_close(&f);

	struct mf_profile p;
	char err[256] = "";
	int r = mf_read_profile(path, &p, err, sizeof(err));
	tap_ok(r == 0, "the reader accepts the file (%s)", err);
	if (r)
		tap_bail("cannot go on");
	tap_ok(p.header.tid == 4242 && p.header.pid == (uint64_t)getpid(),
	       "pid and tid round-trip");
	tap_ok(p.header.state == MF_STATE_THREAD_EXIT && p.complete, "state round-trips: complete");
	tap_ok(p.header.sample_rate == 1 && p.header.max_depth == mf_config.depth,
	       "sample rate and depth round-trip");
	tap_ok(p.header.version == MF_FORMAT_VERSION && p.header.calls_off == 12345 &&
		   p.header.weight == 0 && p.header.records == 0,
	       "version %u, calls made while off, weight and record bits round-trip",
	       p.header.version);
	tap_ok(p.header.timeline_interval_ns == 1000000 && p.header.timeline_records &&
		   f_timeline_count == 1 && p.timeline_count == 1 && p.timeline[0].calls == 640 &&
		   p.timeline[0].time_ns == rec0.time_ns && rec0.time_ns &&
		   p.header.timeline_checked_calls == 704,
	       "the timeline round-trips: its interval, its one record (640 calls), the last "
	       "look's 704");
	/* (version 11) its calls and bytes by entry point: stack s's leaf is entry s % 9, with
	 * s + 1 calls of 8 bytes each */
	int by_entry = 1;
	for (int e = 0; e < MF_ENTRY_COUNT; e++) {
		uint64_t calls = 0;
		for (int s = e; s < STACKS; s += MF_ENTRY_COUNT)
			calls += (uint64_t)s + 1;
		by_entry = by_entry && rec0.by_entry[e].calls == calls &&
			   p.timeline[0].by_entry[e].calls == calls &&
			   p.timeline[0].by_entry[e].bytes == 8 * calls;
	}
	tap_ok(by_entry,
	       "... and its calls and bytes by entry point (malloc %llu calls, %llu bytes)",
	       (unsigned long long)p.timeline[0].by_entry[0].calls,
	       (unsigned long long)p.timeline[0].by_entry[0].bytes);
	tap_ok(p.node_count == written, "node count round-trips (%llu)",
	       (unsigned long long)written);
	tap_ok(memcmp(p.nodes, copy, written * sizeof(*copy)) == 0, "every node round-trips");
	/* Stacks with equal frames and entry share a leaf: expect the sums. */
	uint64_t *want = calloc(written, sizeof(*want));
	for (int s = 0; s < STACKS; s++)
		want[leaf[s]] += (uint64_t)s + 1;
	int good = 1;
	for (int s = 0; s < STACKS && good; s++) {
		const struct mf_node *l = &p.nodes[leaf[s]];
		good = l->module == MF_MODULE_ENTRY &&
		       l->rel_pc == (uint64_t)(s % MF_ENTRY_COUNT) && l->calls == want[leaf[s]] &&
		       l->bytes == 8 * want[leaf[s]];
		int depth = 0;
		for (uint32_t n = l->parent; n; n = p.nodes[n].parent)
			depth++;
		good = good && depth == 1 + s % 8 + (s % 100 == 99);
	}
	tap_ok(good, "every stack's entry point, calls, bytes and depth round-trip");
	v10_reads(path, &p);
	struct mf_modmap m;
	char mpath[4200];
	snprintf(mpath, sizeof(mpath), "%s/modules", mf_prof_dir());
	r = mf_read_modules(mpath, &m, err, sizeof(err));
	tap_ok(r == 0 && m.count > 0, "the module map reads back (%u modules) %s", m.count, err);
	int self = 0;
	for (uint32_t i = 0; i < m.count; i++)
		self |= strstr(m.mods[i].path, "test_format") != NULL && m.mods[i].build_id_len > 0;
	tap_ok(self, "the module map names this program with its build-id");
	mf_modmap_free(&m);

	static char long_path[4200];
	void *h =
	    mf_long_copy(dir, long_path, sizeof(long_path)) ? NULL : dlopen(long_path, RTLD_NOW);
	tap_ok(h != NULL, "a library loads through a path %zu bytes long %s", strlen(long_path),
	       h ? "" : dlerror());
	mf_modules_refresh();
	r = mf_read_modules(mpath, &m, err, sizeof(err));
	struct mf_check c = {&m, 0, 0};
	dl_iterate_phdr(mf_check_visit, &c);
	tap_ok(r == 0 && c.objects > 3 && c.found == c.objects,
	       "the map has every loaded object with its path, bias and start (%d of %d) %s",
	       c.found, c.objects, err);
	/* (a process without a vdso has none to name: qemu-user before 8.1 maps none) */
	int long_seen = 0, vdso = !getauxval(AT_SYSINFO_EHDR);
	for (uint32_t i = 0; r == 0 && i < m.count; i++) {
		long_seen |= !strcmp(m.mods[i].path, long_path) && m.mods[i].loaded &&
			     m.mods[i].build_id_len == 20;
		vdso |=
		    !strcmp(m.mods[i].path, "linux-vdso.so.1") || !strcmp(m.mods[i].path, "[vdso]");
	}
	tap_ok(long_seen && vdso, "the long path is whole, with its build-id; the vdso is named");
	if (h)
		dlclose(h);
	mf_modmap_free(&m);

	/* The memo of whole stacks: each found again as itself, and grown to its full size of
	 * 1024 slots (from one page) and no further. */
	enum { MEMO_NODES = (4 + MF_LEAF_SLOTS) * STACKS + 2 }; /* (each leaf and its record) */
	struct mf_node *mnodes = calloc(MEMO_NODES, sizeof(*mnodes));
	uint64_t mcount = 0;
	struct mf_trie mt;
	static uint32_t mleaf[STACKS];
	int memo_ok = mnodes && mf_trie_init(&mt, NULL, mnodes, MEMO_NODES, &mcount, NULL, resolve,
					     NULL) == 0;
	for (int round = 0; memo_ok && round < 2; round++)
		for (int s = 0; s < STACKS; s++) {
			void *pcs[3] = {(void *)0x1010, (void *)(0x2000 + 16 * (uintptr_t)s),
					(void *)0x3000};
			uint32_t n =
			    mf_trie_stack(&mt, pcs, 3, 0, MF_TRIE_KEY_ENTRY(0), 0, NULL, NULL);
			memo_ok = memo_ok && n != 0 && (round == 0 || n == mleaf[s]);
			mleaf[s] = n;
		}
	tap_ok(memo_ok && mt.memo_mask + 1 == 1024 && mcount == 2 + (3 + MF_LEAF_SLOTS) * STACKS,
	       "%d stacks twice: the same leaves, %llu nodes, a memo of %llu slots", STACKS,
	       (unsigned long long)mcount, memo_ok ? (unsigned long long)mt.memo_mask + 1 : 0);
	if (mnodes)
		mf_trie_destroy(&mt);
	free(mnodes);
	index_tail(1);
	index_tail(0);

	/* The process record: made with the directory, read back, then ended and replaced. */
	struct mf_process_record rec, rec1;
	char ppath[4200], stat[1024], *field;
	snprintf(ppath, sizeof(ppath), "%s/process", mf_prof_dir());
	r = mf_read_process(ppath, &rec, err, sizeof(err));
	tap_ok(r == 0, "the process record reads back %s", err);
	/* (the main thread's stat, the kernel's number: qemu-user answers /proc/self/stat itself,
	 * with its emulation's start, and the library reads the kernel's) */
	char spath[64];
	snprintf(spath, sizeof(spath), "/proc/self/task/%d/stat", (int)getpid());
	FILE *st = fopen(spath, "r");
	size_t got = st ? fread(stat, 1, sizeof(stat) - 1, st) : 0;
	stat[got] = 0;
	if (st)
		fclose(st);
	field = strrchr(stat, ')');
	for (int k = 2; field && k < 22 && *field; field++)
		k += *field == ' ';
	tap_ok(r == 0 && rec.pid == (uint64_t)getpid() && rec.ppid == (uint64_t)getppid() &&
		   field && rec.start_ticks == strtoull(field, NULL, 10),
	       "pid, parent and start time round-trip");
	tap_ok(r == 0 && strstr(rec.exe, "test_format") && rec.argc >= 1 &&
		   strstr(rec.cmdline, "test_format") && rec.state == MF_PROCESS_RUNNING &&
		   !rec.exec_from[0],
	       "executable and command line; running; not exec'd (%s, %u args)", rec.exe, rec.argc);
	/* Version 6: the peak's counters the library sets, and a leaf's lazy peak as a reader
	 * completes it (malloc_freq_format.h, struct mf_life). */
	mf_process_set(MF_PROCESS_PEAK_BYTES, 202052);
	mf_process_set(MF_PROCESS_PEAK_ID, 77);
	snprintf(ppath, sizeof(ppath), "%s/process", mf_prof_dir());
	r = mf_read_process(ppath, &rec, err, sizeof(err));
	tap_ok(r == 0 && rec.counters[MF_PROCESS_PEAK_BYTES] == 202052 &&
		   rec.counters[MF_PROCESS_PEAK_ID] == 77,
	       "the peak's bytes and number round-trip %s", err);
	struct mf_life life = {.blocks = 5,
			       .bytes = 50,
			       .frees = 2,
			       .freed_bytes = 20,
			       .peak_blocks = 9,
			       .peak_bytes = 90,
			       .peak_seen = 77};
	mf_life_settle_record(&life, 77);
	tap_ok(life.peak_blocks == 9 && life.peak_bytes == 90,
	       "a leaf seen since the last maximum keeps its peak figures");
	mf_life_settle_record(&life, 78);
	tap_ok(life.peak_blocks == 3 && life.peak_bytes == 30 && life.peak_seen == 78,
	       "one not seen since holds at the peak what it holds now (%llu blocks, %llu bytes)",
	       (unsigned long long)life.peak_blocks, (unsigned long long)life.peak_bytes);
	char first[sizeof(ppath) - 16]; /* (room after it for ".1/process") */
	snprintf(first, sizeof(first), "%s", mf_prof_dir());
	mf_prof_dir_forget(); /* as a new image of this pid would: its directory is .1 */
	r = mf_prof_dir_ensure();
	snprintf(ppath, sizeof(ppath), "%s/process", first);
	r = r ? r : mf_read_process(ppath, &rec, err, sizeof(err));
	snprintf(ppath, sizeof(ppath), "%s.1/process", first);
	r = r ? r : mf_read_process(ppath, &rec1, err, sizeof(err));
	const char *base = strrchr(first, '/') + 1;
	tap_ok(r == 0 && rec.state == MF_PROCESS_EXECED && rec.end_ns &&
		   !strcmp(rec1.exec_from, base) && rec1.state == MF_PROCESS_RUNNING,
	       "the next image of the pid marks the last replaced and names it (%s)",
	       r == 0 ? rec1.exec_from : err);
	mf_process_quick_exit(3);
	mf_process_exit(); /* (what exit() does after: a status already written is kept) */
	r = mf_read_process(ppath, &rec1, err, sizeof(err));
	tap_ok(r == 0 && rec1.state == MF_PROCESS_QUICK_EXIT && rec1.status == 3 &&
		   (rec1.flags & MF_PROCESS_STATUS) && rec1.end_ns >= rec1.start_ns,
	       "_exit(3) is written, with its status and time");
	/* Version 11: a process detached from (malloc_freq --detach) says so, and when; what the
	 * process does after is not written (its end is not the profiler's to know). */
	mf_prof_dir_forget(); /* (a new image again, running: its directory is .2) */
	r = mf_prof_dir_ensure();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t before = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	mf_process_detach();
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t after = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	mf_process_quick_exit(4);
	snprintf(ppath, sizeof(ppath), "%s.2/process", first);
	r = r ? r : mf_read_process(ppath, &rec1, err, sizeof(err));
	tap_ok(r == 0 && (rec1.flags & MF_PROCESS_DETACHED) && rec1.detached_ns >= before &&
		   rec1.detached_ns <= after && rec1.state == MF_PROCESS_RUNNING &&
		   !(rec1.flags & MF_PROCESS_STATUS),
	       "detach is written with its time, and an _exit after it is not (%s)",
	       r == 0 ? "read" : err);

	/* Version 1's map (4152-byte records), as the previous writer wrote it, still reads. */
	char v1[4200];
	const char *src = getenv("srcdir") ? getenv("srcdir") : ".";
	snprintf(v1, sizeof(v1), "%s/tests/fixtures/fuzz_corpus/modules-v1", src);
	unsigned char *data = NULL;
	size_t size = 0;
	r = mf_read_file(v1, 1 << 20, &data, &size);
	r = r ? r : mf_parse_modules(data + 1, size - 1, &m, err, sizeof(err)); /* a kind byte */
	int named = r == 0 && m.count == 8;
	for (uint32_t i = 0; named && i < m.count; i++)
		named = m.mods[i].path[0] != 0 && m.mods[i].end > m.mods[i].start;
	tap_ok(named, "a version 1 module map reads: %u modules, each with a path and extent %s",
	       r == 0 ? m.count : 0, err);
	free(data);
	mf_modmap_free(&m);
	mf_profile_free(&p);
	free(copy);
	free(want);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}
