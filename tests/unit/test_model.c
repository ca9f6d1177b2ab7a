/* Unit test of mf_print's model, on profiles built by hand: frames interned once for all
 * threads and processes, two threads and two processes with shared and distinct stacks merged
 * into one stack each and one sample per (stack, thread), counts scaled by the sample rate, and
 * every report rendered from one model giving the same totals. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../mf_print/model.h"
#include "../../mf_print/reader.h"
#include "../../mf_print/report.h"
#include "../../mf_print/timeline.h"
#include "../tap.h"

#define MAX_NODES 64

/* A thread's trie being built: node 0 is the root. */
struct trie {
	struct mf_node nodes[MAX_NODES];
	uint32_t count;
};

/* The node for frame (module, pc) under parent, made if new. */
static uint32_t child(struct trie *t, uint32_t parent, uint32_t module, uint64_t pc)
{
	for (uint32_t i = 1; i < t->count; i++)
		if (t->nodes[i].parent == parent && t->nodes[i].module == module &&
		    t->nodes[i].rel_pc == pc)
			return i;
	t->nodes[t->count] = (struct mf_node){.rel_pc = pc, .parent = parent, .module = module};
	return t->count++;
}

/* Counts calls of `bytes` each at the stack pcs[0..n) (outermost first, all in module 0, or
 * module 1 for pcs >= 0x1000), called through entry. */
static void record(struct trie *t, const uint64_t *pcs, int n, int entry, uint64_t calls,
		   uint64_t bytes)
{
	uint32_t at = 0;
	if (!t->count)
		t->count = 1;
	for (int i = 0; i < n; i++)
		at = child(t, at, pcs[i] >= 0x1000, pcs[i]);
	at = child(t, at, MF_MODULE_ENTRY, (uint64_t)entry);
	t->nodes[at].calls += calls;
	t->nodes[at].bytes += calls * bytes;
}

static struct mf_profile profile(struct trie *t, uint64_t pid, uint64_t tid, uint64_t rate)
{
	struct mf_profile p = {0};
	p.path = (char *)"test";
	p.header.pid = pid;
	p.header.tid = tid;
	p.header.sample_rate = rate;
	p.header.state = MF_STATE_THREAD_EXIT;
	snprintf(p.header.thread_name, sizeof(p.header.thread_name), "t%llu",
		 (unsigned long long)tid);
	p.node_count = t->count;
	p.nodes = t->nodes;
	p.complete = 1;
	return p;
}

static struct mf_module mods[2];
static struct mf_modmap map = {.count = 2, .mods = mods};

static uint32_t add_process(struct mf_model *m, uint64_t pid, const char *name)
{
	uint32_t id;
	struct mf_process info = {.pid = pid, .name = name, .end = MF_END_EXIT};
	if (mf_model_add_process(m, &info, &id) || mf_model_add_modules(m, id, &map))
		tap_bail("out of memory");
	return id;
}

static void add_thread(struct mf_model *m, uint32_t process, struct trie *t, uint64_t tid,
		       uint64_t rate)
{
	struct mf_profile p = profile(t, m->processes[process].pid, tid, rate);
	if (mf_model_add_thread(m, process, &p))
		tap_bail("mf_model_add_thread failed");
}

/* A report's text, in a buffer to be freed. */
static char *render(int (*report)(FILE *, const struct mf_model *,
				  const struct mf_report_options *),
		    const struct mf_model *m, const struct mf_report_options *o)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f || report(f, m, o))
		tap_bail("a report failed");
	fclose(f);
	return buf;
}

/* The sum of the last field of --collapsed lines. */
static uint64_t collapsed_sum(const char *text)
{
	uint64_t sum = 0;
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		const char *space = memrchr(line, ' ', (size_t)(end - line));
		sum += strtoull(space + 1, NULL, 10);
		line = end + 1;
	}
	return sum;
}

/* The sum of the first column of the rows (after the line ending in heading) that row()
 * takes: a tree's top level, the threads' sites, the programs. */
static uint64_t column_sum(const char *text, const char *heading, int (*row)(const char *line))
{
	const char *at = strstr(text, heading);
	uint64_t sum = 0;
	if (!at)
		return UINT64_MAX;
	for (const char *line = strchr(at, '\n') + 1; *line;) {
		/* (a count may be marked "~": a sampled estimate) */
		const char *num = line + strspn(line, " ");
		num += *num == '~';
		char *end;
		uint64_t v = strtoull(num, &end, 10);
		if (end != num && row(line))
			sum += v;
		const char *next = strchr(line, '\n');
		if (!next)
			break;
		line = next + 1;
	}
	return sum;
}

/* A tree's top level: its path column (after calls, percent and bytes) starts with no
 * branch. */
static int top_level(const char *line)
{
	const char *path = line + 12 + 1 + 7 + 1 + 11 + 2;
	return strlen(line) > 34 && *path != ' ' && *path != '|' && *path != '`';
}

static int any_row(const char *line)
{
	(void)line;
	return 1;
}

/* A model of one process of one thread whose trie holds CALLS calls of SIZE bytes at ENTRY, with
 * room for two timeline records (the caller fills them in, then finishes the model). */
static struct mf_thread *timeline_thread(struct mf_model *m, struct mf_symbolizer *sym, int entry,
					 uint64_t calls, uint64_t size, uint32_t *process)
{
	static struct trie t;
	static const uint64_t pcs[] = {0x10, 0x70};
	memset(&t, 0, sizeof(t));
	record(&t, pcs, 2, entry, calls, size);
	if (mf_model_init(m, sym))
		tap_bail("mf_model_init failed");
	*process = add_process(m, 3, "timeline");
	add_thread(m, *process, &t, 31, 1);
	struct mf_thread *th = &m->threads[m->nthreads - 1];
	if (!(th->records = calloc(2, sizeof(*th->records))))
		tap_bail("out of memory");
	th->nrecords = 2;
	th->start_ns = 1000, th->end_ns = 9000, th->timeline = 1;
	return th;
}

/* A thread's whole record, then a look before a pause (calls only), then its end: between the
 * two its calls, bytes and calls by entry point are spread alike, the look's other figures
 * filled in from the whole records around it first. */
static void timeline_spread_alike(struct mf_symbolizer *sym)
{
	struct mf_model m;
	uint32_t p;
	struct mf_thread *th = timeline_thread(&m, sym, MF_ENTRY_CALLOC, 3000, 10, &p);
	struct mf_timeline_record *r = th->records;
	th->interval_ns = 1000, th->by_entry = 1;
	r[0] = (struct mf_timeline_record){.time_ns = 2000, .calls = 1000, .bytes = 10000};
	r[0].by_entry[MF_ENTRY_CALLOC].calls = 1000, r[0].by_entry[MF_ENTRY_CALLOC].bytes = 10000;
	r[1] = (struct mf_timeline_record){
	    .time_ns = 4000, .calls = 3000, .flags = MF_TIMELINE_CALLS_ONLY};
	if (mf_model_finish(&m))
		tap_bail("mf_model_finish failed");
	struct mf_timeline tl;
	if (mf_timeline_build(&m, p, &tl))
		tap_bail("mf_timeline_build failed");
	uint64_t v[MF_SPREAD];
	mf_timeline_spread_at(&tl, 3000, v);
	uint64_t calls = v[MF_SPREAD_CALLS], calloc_calls = v[MF_SPREAD_ENTRY + MF_ENTRY_CALLOC];
	tap_ok(calls == 2000 && calloc_calls == 2000 && v[MF_SPREAD_BYTES] == 20000,
	       "timeline: halfway from a whole record to a look before a pause, calls %llu, calloc "
	       "%llu, bytes %llu (2000, 2000, 20000: spread alike)",
	       (unsigned long long)calls, (unsigned long long)calloc_calls,
	       (unsigned long long)v[MF_SPREAD_BYTES]);
	mf_timeline_free(&tl);
	mf_model_free(&m);
}

/* --timeline's last row, when the timeline's span is not a whole number of rows: it ends at the
 * timeline's end, and its rate is of its own width. A thread from 1 s to 8.5 s, rows of 1 s,
 * whose last 1500 calls are spread over 4 s to 8.5 s: its last row, 7 s to 7.5 s, holds about
 * 167 calls, at 1500 / 4.5 = 333 calls/s (not 167/s, its calls over a whole row). */
static void timeline_last_row(struct mf_symbolizer *sym)
{
	struct mf_model m;
	uint32_t p;
	struct mf_thread *th = timeline_thread(&m, sym, MF_ENTRY_MALLOC, 3000, 10, &p);
	struct mf_timeline_record *r = th->records;
	th->start_ns = 1000000000, th->end_ns = 8500000000, th->interval_ns = 1000000000;
	th->seen = 3000;
	r[0] = (struct mf_timeline_record){.time_ns = 2000000000, .calls = 1000, .bytes = 10000};
	r[1] = (struct mf_timeline_record){.time_ns = 4000000000, .calls = 1500, .bytes = 15000};
	if (mf_model_finish(&m))
		tap_bail("mf_model_finish failed");
	struct mf_report_options o = {0};
	char *text = render(mf_report_timeline, &m, &o);
	const char *last = text, *line = text;
	for (const char *nl; (nl = strchr(line, '\n')) && nl[1]; line = nl + 1)
		last = nl + 1;
	char at[32] = "";
	double when = 0, calls = 0, rate = 0;
	int n = sscanf(last, "%lf %31s %lf %lf", &when, at, &calls, &rate);
	tap_ok(n == 4 && when == 7.5 && calls >= 166 && calls <= 167 && rate >= 332 && rate <= 334,
	       "--timeline: the last row ends at the end (%.3f s), %.0f calls at %.0f/s (7.5 s, "
	       "166-167 calls, 333/s)",
	       when, calls, rate);
	free(text);
	mf_model_free(&m);
}

/* A timeline's moment where a thread's whole record (its live blocks counted) and a later look
 * at calls only fall on one tick of the coarse clock: the blocks are known there only if that
 * look added no call. */
static void timeline_same_tick(struct mf_symbolizer *sym)
{
	for (int more = 0; more < 2; more++) {
		struct mf_model m;
		uint32_t p;
		struct mf_thread *th = timeline_thread(&m, sym, MF_ENTRY_MALLOC, 6400, 16, &p);
		struct mf_timeline_record *r = th->records;
		m.has_lifetimes = 1;
		th->interval_ns = 200;
		r[0] = (struct mf_timeline_record){
		    .time_ns = 5000, .calls = 4160, .live_blocks = 4159};
		r[1] = (struct mf_timeline_record){
		    .time_ns = 5000, .calls = more ? 6400 : 4160, .flags = MF_TIMELINE_CALLS_ONLY};
		if (mf_model_finish(&m))
			tap_bail("mf_model_finish failed");
		struct mf_timeline tl;
		if (mf_timeline_build(&m, p, &tl))
			tap_bail("mf_timeline_build failed");
		const struct mf_timeline_point *at = NULL;
		for (size_t i = 0; i < tl.count; i++)
			if (tl.points[i].time_ns == 5000)
				at = &tl.points[i];
		tap_ok(at && at->calls == r[1].calls && at->blocks_known == !more,
		       "timeline: a whole record and a look at %s calls on one tick: %llu calls, "
		       "blocks %s",
		       more ? "more" : "no more", at ? (unsigned long long)at->calls : 0ull,
		       at && at->blocks_known ? "known" : "not known");
		mf_timeline_free(&tl);
		mf_model_free(&m);
	}
}

/* A leaf whose time the thread kept in two nodes (its first time node could not be found again:
 * the trie's index had no room for it) is charged the time of both. */
static void time_nodes_add_up(struct mf_symbolizer *sym)
{
	struct mf_model m;
	if (mf_model_init(&m, sym))
		tap_bail("mf_model_init failed");
	static const uint64_t A[] = {0x10, 0x20};
	struct trie t = {0};
	record(&t, A, 2, MF_ENTRY_MALLOC, 4, 8);
	uint32_t leaf = t.count - 1;
	for (int k = 0; k < 2; k++)
		t.nodes[t.count++] = (struct mf_node){
		    .parent = leaf, .module = MF_MODULE_WEIGHT, .bytes = k ? 500 : 300};
	struct mf_profile p = profile(&t, 1, 1, 1);
	p.header.weight = 1;
	uint32_t proc = add_process(&m, 1, "one");
	if (mf_model_add_thread(&m, proc, &p) || mf_model_finish(&m))
		tap_bail("mf_model_add_thread failed");
	tap_ok(m.weighted && mf_model_total(&m, MF_METRIC_TIME, NULL) == 800 &&
		   mf_model_total(&m, MF_METRIC_CALLS, NULL) == 4,
	       "a leaf's two time nodes add up: 300 + 500 ns, 4 calls (%llu ns)",
	       (unsigned long long)mf_model_total(&m, MF_METRIC_TIME, NULL));
	mf_model_free(&m);
}

int main(void)
{
	for (int i = 0; i < 2; i++) {
		snprintf(mods[i].path, sizeof(mods[i].path), "/nonexistent/lib%d.so", i);
		mods[i].build_id_len = 4;
		memcpy(mods[i].build_id, i ? "\x01\x02\x03\x05" : "\x01\x02\x03\x04", 4);
	}
	struct mf_symbolizer *sym = mf_sym_new();
	struct mf_model m;
	if (!sym || mf_model_init(&m, sym))
		tap_bail("mf_model_init failed");
	const size_t special_frames = m.nframes; /* the entry points and the truncation mark */

	/* Process 1, thread 11: stacks A (twice: malloc and calloc) and B. */
	static const uint64_t A[] = {0x10, 0x20, 0x1030}, B[] = {0x10, 0x40};
	static const uint64_t C[] = {0x10, 0x20, 0x1050}, D[] = {0x60};
	struct trie t11 = {0}, t12 = {0}, t21 = {0};
	record(&t11, A, 3, MF_ENTRY_MALLOC, 5, 16);
	record(&t11, A, 3, MF_ENTRY_CALLOC, 2, 100);
	record(&t11, B, 2, MF_ENTRY_MALLOC, 7, 8);
	/* thread 12: A again (shared), and C (its own) */
	record(&t12, A, 3, MF_ENTRY_MALLOC, 3, 16);
	record(&t12, C, 3, MF_ENTRY_MALLOC, 1, 1);
	/* process 2 (another program, the same libraries), thread 21, sampled 1 in 10: A and D */
	record(&t21, A, 3, MF_ENTRY_MALLOC, 4, 16);
	record(&t21, D, 1, MF_ENTRY_REALLOC, 1, 32);

	uint32_t p1 = add_process(&m, 100, "first");
	add_thread(&m, p1, &t11, 11, 1);
	size_t frames_one = m.nframes;
	add_thread(&m, p1, &t12, 12, 1);
	uint32_t p2 = add_process(&m, 200, "second");
	add_thread(&m, p2, &t21, 21, 10);

	/* Frames: one per distinct (module, address): 0x10 0x20 0x40 0x60 of lib0, 0x1030
	 * 0x1050 of lib1 (the same files in both processes are the same modules). */
	tap_ok(m.nmodules == 2, "the same module in two processes is one module (%zu)", m.nmodules);
	tap_ok(m.nframes - special_frames == 6, "one frame per distinct address: 6 (got %zu)",
	       m.nframes - special_frames);
	tap_ok(frames_one - special_frames == 4, "thread 11's 4 addresses made 4 frames");
	uint32_t f10 = MF_NONE;
	int once = 1;
	for (size_t f = special_frames; f < m.nframes; f++)
		if (m.frames[f].offset == 0x10) {
			once &= f10 == MF_NONE;
			f10 = (uint32_t)f;
		}
	tap_ok(once && f10 != MF_NONE, "address 0x10, in every stack, is one frame");
	tap_ok(f10 != MF_NONE && !m.frames[f10].function,
	       "a module that cannot be opened: its frames have no function name (JSON's null; "
	       "the reports show module+offset)");

	/* Stacks: A+malloc, A+calloc, B+malloc, C+malloc, D+realloc: 5, A+malloc shared by
	 * three threads of two processes. */
	tap_ok(m.nstacks == 5, "5 distinct stacks (got %zu)", m.nstacks);
	tap_ok(m.nsamples == 7, "7 samples: a (stack, thread) each (got %zu)", m.nsamples);
	uint32_t shared = m.samples[0].stack;
	int threads_of_shared = 0;
	for (size_t i = 0; i < m.nsamples; i++)
		threads_of_shared += m.samples[i].stack == shared;
	tap_ok(threads_of_shared == 3, "stack A+malloc: one stack, a sample in each of 3 threads");
	const struct mf_stack *s = &m.stacks[shared];
	const uint32_t *fr = mf_model_stack_frames(&m, shared);
	tap_ok(s->depth == 4 && fr[0] == f10 && fr[3] == m.entry_frame[MF_ENTRY_MALLOC],
	       "a stack's frames: outermost first, the entry frame last");

	/* Counts: calls 5+2+7 + 3+1 + (4+1)*10 = 68; bytes 80+200+56 + 48+1 + (64+32)*10 */
	uint64_t entry[MF_ENTRY_COUNT];
	uint64_t calls = mf_model_total(&m, MF_METRIC_CALLS, entry);
	uint64_t bytes = mf_model_total(&m, MF_METRIC_BYTES, NULL);
	tap_ok(calls == 68 && bytes == 1345, "totals: 68 calls, 1345 bytes (got %llu, %llu)",
	       (unsigned long long)calls, (unsigned long long)bytes);
	tap_ok(entry[MF_ENTRY_MALLOC] == 56 && entry[MF_ENTRY_CALLOC] == 2 &&
		   entry[MF_ENTRY_REALLOC] == 10,
	       "by entry point: malloc 56, calloc 2, realloc 10 (the sampled thread's x 10)");
	tap_ok(m.estimated, "a sampled thread makes the counts estimates");

	/* A module reloaded under another index of the same map (same file): its stacks merge. */
	struct mf_module twice[3] = {mods[0], mods[1], mods[0]};
	struct mf_modmap map3 = {.count = 3, .mods = twice};
	struct trie t13 = {0};
	record(&t13, B, 2, MF_ENTRY_MALLOC, 1, 8);
	uint32_t at = child(&t13, 0, 2, 0x10); /* B through module index 2: the same lib0 */
	at = child(&t13, at, 2, 0x40);
	at = child(&t13, at, MF_MODULE_ENTRY, MF_ENTRY_MALLOC);
	t13.nodes[at].calls = 2;
	t13.nodes[at].bytes = 16;
	if (mf_model_add_modules(&m, p1, &map3))
		tap_bail("out of memory");
	size_t samples = m.nsamples, stacks = m.nstacks;
	add_thread(&m, p1, &t13, 13, 1);
	if (mf_model_finish(&m))
		tap_bail("mf_model_finish failed");
	tap_ok(m.nstacks == stacks && m.nsamples == samples + 1,
	       "one thread's two leaves of one stack (a module loaded twice): one sample");
	calls = mf_model_total(&m, MF_METRIC_CALLS, NULL);

	/* Every report from this one model agrees on the total. */
	struct mf_report_options o = {.threshold = 0, .metric = MF_METRIC_CALLS, .files = 4};
	char *summary = render(mf_report_summary, &m, &o);
	char *tree = render(mf_report_tree, &m, &o);
	char *caller = render(mf_report_caller, &m, &o);
	char *threads = render(mf_report_threads, &m, &o);
	char *programs = render(mf_report_programs, &m, &o);
	char *collapsed = render(mf_report_collapsed, &m, &o);
	char want[64];
	snprintf(want, sizeof(want), "malloc_freq: ~%llu calls", (unsigned long long)calls);
	tap_ok(!strncmp(summary, want, strlen(want)), "summary: %s", want);
	tap_ok(column_sum(tree, "call stack (allocation <- caller)", top_level) == calls,
	       "tree: its roots hold %llu calls", (unsigned long long)calls);
	tap_ok(column_sum(caller, "call stack (caller -> allocation)", top_level) == calls,
	       "caller tree: its roots hold %llu calls", (unsigned long long)calls);
	tap_ok(strstr(tree, "  [first]\n") && strstr(tree, "  [second]\n"),
	       "tree: rooted under the two programs");
	tap_ok(column_sum(threads, "allocation site\n", any_row) == calls,
	       "threads: its sites hold %llu calls", (unsigned long long)calls);
	tap_ok(column_sum(programs, "how it ended\n", any_row) == calls,
	       "programs: they hold %llu calls", (unsigned long long)calls);
	tap_ok(collapsed_sum(collapsed) == calls, "collapsed: its lines hold %llu calls",
	       (unsigned long long)calls);
	o.metric = MF_METRIC_BYTES;
	char *cbytes = render(mf_report_collapsed, &m, &o);
	tap_ok(collapsed_sum(cbytes) == mf_model_total(&m, MF_METRIC_BYTES, NULL),
	       "collapsed --bytes: its lines hold every byte");
	o.merge_processes = 1;
	o.metric = MF_METRIC_CALLS;
	char *merged = render(mf_report_collapsed, &m, &o);
	tap_ok(!strchr(merged, '[') && collapsed_sum(merged) == calls,
	       "--merge-processes: no program roots, the same total");
	o.merge_processes = 0;

	/* The outputs for other tools, and a diff of the model against itself. */
	char *json = render(mf_report_json, &m, &o);
	snprintf(want, sizeof(want), "\"total\": {\"calls\": %llu,", (unsigned long long)calls);
	tap_ok(strstr(json, want) != NULL, "json: the summary's %s", want);
	char *dot = render(mf_report_dot, &m, &o);
	tap_ok(!strncmp(dot, "digraph malloc_freq {", 21) && strstr(dot, " -> "),
	       "dot: a digraph with edges");
	char *pprof = render(mf_report_pprof, &m, &o);
	tap_ok((unsigned char)pprof[0] == 0x1f && (unsigned char)pprof[1] == 0x8b,
	       "pprof: gzipped");
	o.base = &m;
	o.base_name = "itself";
	char *diff = render(mf_report_diff, &m, &o);
	snprintf(want, sizeof(want), "malloc_freq diff: ~%llu -> ~%llu calls (0)",
		 (unsigned long long)calls, (unsigned long long)calls);
	tap_ok(!strncmp(diff, want, strlen(want)) &&
		   strstr(diff, "0 only in the base, 0 only in this profile; 0 changed"),
	       "diff against itself: %s, no stack changed", want);
	char *dcollapsed = render(mf_report_diff_collapsed, &m, &o);
	uint64_t left = 0, right = 0;
	int same = 1;
	for (const char *line = dcollapsed; *line; line = strchr(line, '\n') + 1) {
		const char *end = strchr(line, '\n');
		const char *b = memrchr(line, ' ', (size_t)(end - line));
		const char *a = memrchr(line, ' ', (size_t)(b - line));
		uint64_t x = strtoull(a + 1, NULL, 10), y = strtoull(b + 1, NULL, 10);
		same &= x == y;
		left += x;
		right += y;
	}
	tap_ok(same && left == calls && right == calls,
	       "diff --collapsed against itself: both columns equal, each adding up to %llu",
	       (unsigned long long)calls);
	free(summary), free(tree), free(caller), free(threads), free(programs), free(collapsed);
	free(cbytes), free(merged), free(json), free(dot), free(pprof), free(diff),
	    free(dcollapsed);
	mf_model_free(&m);
	timeline_same_tick(sym);
	timeline_spread_alike(sym);
	timeline_last_row(sym);
	time_nodes_add_up(sym);
	mf_sym_free(sym);
	return tap_done();
}
