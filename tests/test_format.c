/* The on-disk format round trip: the library's own writer (profile_file.c, trie.c, modules.c)
 * records known stacks into a real file, mf_print's reader reads it back, and everything must
 * agree: header fields, every node, and the calls and bytes of every stack. Also forces the
 * file to grow several times. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/mf_internal.h"
#include "../mf_print/reader.h"
#include "tap.h"

#define STACKS 3000

/* Frames here are fake addresses; resolve maps them to module 0 at offset pc - 0x1000. */
static void resolve(uintptr_t pc, struct mf_node *node)
{
	node->module = 0;
	node->rel_pc = pc - 0x1000;
}

int main(void)
{
	char dir[] = "/tmp/mf_format.XXXXXX";
	if (!mkdtemp(dir))
		tap_bail("mkdtemp");
	setenv("MALLOC_FREQ_DIR", dir, 1);
	mf_config_load();
	mf_modules_init();
	tap_ok(mf_prof_dir_ensure() == 0, "the writer creates the process directory");
	struct mf_prof_file f;
	memset(&f, 0, sizeof(f));
	tap_ok(mf_prof_open(&f, 4242) == 0, "the writer creates a thread file");
	struct mf_trie t;
	tap_ok(mf_trie_init(&t, f.nodes, f.capacity, &f.header->node_count, mf_prof_grow, resolve,
			    &f) == 0,
	       "the trie is set up over the file");
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
	mf_prof_finalize(f.header, MF_STATE_THREAD_EXIT, 4242);
	uint64_t written = f.header->node_count;
	struct mf_node *copy = malloc(written * sizeof(*copy));
	memcpy(copy, f.nodes, written * sizeof(*copy));
	char path[4200];
	snprintf(path, sizeof(path), "%s", f.path);
	mf_trie_destroy(&t);
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
	mf_profile_free(&p);
	free(copy);
	free(want);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}
