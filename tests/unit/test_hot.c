/* The hot stacks (lib/unwind/hot.c) and the words that decide a walk (mf_walk_checks in
 * lib/unwind/walk.c), on stacks built by hand in an array: which words are checked and where
 * (an rbp value just before the first rule that uses it: the entry point frame's from its
 * register, else the word it was saved in), that a kept stack is found only while every such
 * word, the first frame and the epoch are the same, and that stacks sharing their inner words
 * share them in the tree and part where they differ. Rule words are packed by mf_rule_pack. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "fork.h"
#include "thread.h"
#include "unwind/internal.h"
#include "../tap.h"

/* What the walk and the rule table need from the rest of the library, unused here. */
MF_TLS struct mf_tls mf_tls;
pthread_rwlock_t mf_fork_lock = PTHREAD_RWLOCK_INITIALIZER;
unsigned mf_fork_pending;
union mf_wiped mf_wiped;
void mf_fork_wait(void) {}
volatile unsigned mf_modules_generation;
int mf_cfi_find(uintptr_t pc, struct mf_cfi_rule *rule)
{
	(void)pc;
	rule->kind = MF_CFI_UNKNOWN;
	return -1;
}
int mf_unwind_agrees(uintptr_t pc, uintptr_t sp, uintptr_t bp, const struct mf_cfi_rule *rule)
{
	(void)pc, (void)sp, (void)bp, (void)rule;
	return 0;
}
uint64_t mf_modules_identity(uintptr_t pc, uint64_t *rel_pc)
{
	*rel_pc = pc;
	return 0;
}
uint64_t mf_rules_key(uint64_t module, uint64_t rel_pc)
{
	return module ^ rel_pc;
}
int mf_rules_on(void)
{
	return 0;
}
uint64_t mf_rules_known(uint64_t key)
{
	(void)key;
	return 0;
}
void mf_rules_add(uint64_t key, uint64_t rule)
{
	(void)key, (void)rule;
}
void mf_rules_needed(void) {}
/* RLIMIT_AS's share for one part of the profiler: none at first (the arena may move to a
 * mapping of its largest size) */
static size_t as_share = SIZE_MAX;
size_t mf_prof_as_share(void)
{
	return as_share;
}

static uint64_t rule(int cfa_rbp, int16_t rbp_off, int32_t cfa_off)
{
	struct mf_cfi_rule r = {.cfa_off = cfa_off,
				.rbp_off = rbp_off,
				.cfa_rbp = (uint8_t)cfa_rbp,
				.kind = MF_CFI_STEP,
				.ra_off = -8};
	return mf_rule_pack(&r, mf_walk_epoch_now() & MF_RULE_EPOCH_MASK);
}

static uint64_t end_rule(void)
{
	struct mf_cfi_rule r = {.kind = MF_CFI_END};
	return mf_rule_pack(&r, mf_walk_epoch_now() & MF_RULE_EPOCH_MASK);
}

enum { PC3 = 0x401000, PC2 = 0x402000, PC1 = 0x403000, PC0 = 0x404000 };

static uintptr_t mem[64];	 /* the stack: higher index, higher address (outer frames) */
static struct mf_walk_stacks ws; /* large: not on the test's stack */
static struct mf_hot hot;
static _Alignas(16) unsigned char arena[MF_HOT_ARENA], other_arena[MF_HOT_ARENA];
static struct mf_walk_check scratch[MF_HOT_CHECKS];

#define AT(i)	((uintptr_t)&mem[i])
#define SLOT(a) mem[((a)-AT(0)) / 8]
#define WORD(a) ((const uintptr_t *)(a))

/* Four frames, innermost (3, the entry point's) to outermost (0, where the walk ends):
 *   3: CFA = sp + 16, rbp untouched (frame 2's rbp is frame 3's)
 *   2: CFA = sp + 32; if saves_rbp, rbp saved at CFA - 16 (with the return address: an
 *      AArch64 frame record), else untouched
 *   1: CFA = rbp + 16, rbp saved at CFA - 16 (a frame-pointer frame)
 *   0: the end.
 * Returns frame 3 as a walk starts from it. */
static struct mf_frame build(int saves_rbp)
{
	memset(mem, 0, sizeof(mem));
	uintptr_t sp3 = AT(4), bp3 = AT(30), cfa3 = sp3 + 16, cfa2 = cfa3 + 32;
	uintptr_t bp1 = saves_rbp ? AT(40) : bp3, cfa1 = bp1 + 16;
	SLOT(cfa3 - 8) = PC2;
	SLOT(cfa2 - 8) = PC1;
	if (saves_rbp)
		SLOT(cfa2 - 16) = bp1;
	SLOT(cfa1 - 8) = PC0;
	SLOT(cfa1 - 16) = 0x77; /* frame 0's rbp: used by no rule */
	ws.count = 4;
	ws.epoch = mf_walk_epoch_now();
	ws.reusable = 1;
	uintptr_t pcs[4] = {PC0, PC1, PC2, PC3};
	uintptr_t sps[4] = {cfa1, cfa2, cfa3, sp3};
	uintptr_t bps[4] = {0x77, bp1, bp3, bp3};
	uint64_t rules[4] = {end_rule(), rule(1, -16, 16), rule(0, saves_rbp ? -16 : 0, 32),
			     rule(0, 0, 16)};
	for (int i = 0; i < 4; i++) {
		ws.pc[i] = pcs[i];
		ws.f[i].sp = sps[i];
		ws.f[i].bp = bps[i];
		ws.f[i].rule = rules[i];
	}
	return (struct mf_frame){PC3, sp3, bp3, PC2};
}

/* The entry point frame, kept at one place for every call as mf_sample keeps it: the hot
 * stacks check its rbp there. */
static struct mf_frame entry;

static uint32_t find(struct mf_frame f)
{
	entry = f;
	return mf_hot_find(&hot, &entry, mf_walk_epoch_now());
}

/* Frame 1's return address (the outermost word: frame 1's CFA is its rbp + 16), as the stack
 * holds it and as ws says. */
static void outer_pc(uintptr_t pc)
{
	SLOT(ws.f[1].bp + 8) = pc;
	ws.pc[0] = pc;
}

int main(void)
{
	hot.arena = arena;
	hot.scratch = scratch;
	struct mf_walk_check c[16];

	/* rbp passed on untouched from the entry point's frame to an rbp-based rule */
	struct mf_frame f = build(0);
	int k = mf_walk_checks(&ws, c, 16, &entry.bp);
	tap_ok(k == 4, "frame pointer reached through untouched rbp: 4 words checked (got %d)", k);
	tap_ok(k == 4 && c[0].at == WORD(f.sp + 16 - 8) && c[0].was == PC2 && c[1].was == PC1 &&
		   c[3].was == PC0,
	       "... the return addresses, innermost first");
	tap_ok(k == 4 && c[2].at == &entry.bp && c[2].was == f.bp,
	       "... and the entry point's rbp, from its register, just before the rule using it");
	mf_hot_put(&hot, &ws, 42, &entry);
	tap_ok(find(f) == 42, "the same stack is found at its leaf");
	struct mf_frame g = f;
	g.bp += 64;
	tap_ok(find(g) == 0, "not with another rbp in the entry point's frame");
	g = f;
	g.sp += 8;
	tap_ok(find(g) == 0, "not from another sp");
	g = f;
	g.pc += 4;
	tap_ok(find(g) == 0, "not from another entry point (its own return address)");
	g = f;
	g.caller += 4;
	tap_ok(find(g) == 0, "not for another caller");
	SLOT(f.sp + 16 + 32 - 8) = PC1 + 4;
	tap_ok(find(f) == 0, "not once a return address further out changed");
	SLOT(f.sp + 16 + 32 - 8) = PC1;
	SLOT(f.bp) = 0x99;
	tap_ok(find(f) == 42, "but still when frame 0's saved rbp changed: no rule uses it");
	hot.missed = 0;
	tap_ok(find(f) == 42 && !hot.missed, "a call found is not marked missed");
	SLOT(f.sp + 16 + 32 - 8) = PC1 + 4;
	tap_ok(find(f) == 0 && hot.missed,
	       "a call looked for and not found is (the slow path does not look again)");
	SLOT(f.sp + 16 + 32 - 8) = PC1;
	hot.missed = 0;
	mf_wiped.epoch++;
	tap_ok(find(f) == 0, "not in another epoch");
	tap_ok(!hot.missed, "... where it did not look: not marked (the slow path looks)");

	/* frame 2 saves rbp: the entry point's no longer matters, the saved word does */
	f = build(1);
	k = mf_walk_checks(&ws, c, 16, &entry.bp);
	tap_ok(k == 4 && c[2].at == WORD(f.sp + 16 + 32 - 16) && c[2].was == AT(40),
	       "rbp saved on the way: that word is checked, not the register (got %d words)", k);
	mf_hot_put(&hot, &ws, 43, &entry);
	g = f;
	g.bp += 64;
	tap_ok(find(g) == 43, "found whatever the entry point's rbp");
	SLOT(f.sp + 16 + 32 - 16) += 64;
	tap_ok(find(f) == 0, "not once the saved rbp changed");
	SLOT(f.sp + 16 + 32 - 16) -= 64;
	tap_ok(find(f) == 43, "found again once it is back");
	tap_ok(mf_walk_checks(&ws, c, 3, &entry.bp) == -1, "more words than allowed: -1");

	/* One inner part reached from several outer frames (a wrapper called from three
	 * paths): each found at its own leaf, whichever was kept first. */
	for (int i = 1; i <= 3; i++) {
		outer_pc(PC0 + 0x100 * (uintptr_t)i);
		mf_hot_put(&hot, &ws, 50 + (uint32_t)i, &entry);
	}
	int all = 1;
	for (int round = 0; round < 2; round++)
		for (int i = 3; i >= 1; i--) {
			outer_pc(PC0 + 0x100 * (uintptr_t)i);
			all &= find(f) == 50 + (uint32_t)i;
		}
	outer_pc(PC0);
	tap_ok(all && find(f) == 43,
	       "three stacks parting at their outermost word, and the first: each at its leaf");
	outer_pc(PC0 + 0x400);
	tap_ok(find(f) == 0, "a fifth outer frame is not found");
	/* Parting further in: frame 2's return address; the node splits. */
	outer_pc(PC0);
	SLOT(f.sp + 16 + 32 - 8) = PC1 + 8;
	ws.pc[1] = PC1 + 8;
	uint32_t used = hot.used;
	mf_hot_put(&hot, &ws, 60, &entry);
	tap_ok(find(f) == 60, "a stack parting at an inner word: found at its leaf");
	/* (a node's header takes 32 bytes, a word 16, its stop 16) */
	tap_ok(hot.used - used == 32 + (32 + 3 * 16),
	       "... the split moves no word: the new stack's node (its 2 words after the parting "
	       "one, and a stop) and a header for the rest of the old one, 112 bytes (%u)",
	       hot.used - used);
	SLOT(f.sp + 16 + 32 - 8) = PC1;
	all = 1;
	for (int i = 1; i <= 3; i++) {
		outer_pc(PC0 + 0x100 * (uintptr_t)i);
		all &= find(f) == 50 + (uint32_t)i;
	}
	tap_ok(all, "... and the three kept before it still are");
	SLOT(f.sp + 16 + 32 - 8) = PC1 + 8;
	outer_pc(PC0 + 0x100);
	tap_ok(find(f) == 0, "a mix of the two (inner of one, outer of another) is not found");

	/* A branch goes to the child found last for its word's value directly; once the node
	 * splits it branches on another word, which may hold that very value. */
	f = build(1);
	mf_hot_drop(&hot);
	outer_pc(PC0);
	mf_hot_put(&hot, &ws, 70, &entry);
	outer_pc(PC1 + 8);
	mf_hot_put(&hot, &ws, 71, &entry);
	all = 1;
	for (int round = 0; round < 2; round++) {
		outer_pc(PC1 + 8);
		all &= find(f) == 71;
		outer_pc(PC0);
		all &= find(f) == 70;
	}
	tap_ok(all, "two stacks parting at their outermost word, found again and again");
	SLOT(f.sp + 16 + 32 - 8) = PC1 + 8; /* frame 2's return address: PC1 + 8, as 71's outer */
	ws.pc[1] = PC1 + 8;
	mf_hot_put(&hot, &ws, 72, &entry);
	tap_ok(find(f) == 72, "a third parting further in, at a word holding the value that led "
			      "to 71 further out: found at its own leaf");
	SLOT(f.sp + 16 + 32 - 8) = PC1;
	ws.pc[1] = PC1;
	all = find(f) == 70;
	outer_pc(PC1 + 8);
	tap_ok(all && find(f) == 71, "... and the two before it still at theirs");

	/* stacks never found again, in a new thread's arena: it stays at its first size */
	struct mf_hot keep = hot;
	memset(&hot, 0, sizeof(hot));
	hot.arena = other_arena;
	hot.scratch = scratch;
	f = build(1);
	for (uint32_t i = 0; i < 3000; i++) {
		ws.f[3].sp = f.sp - 16 * (i + 1);
		mf_hot_put(&hot, &ws, 100 + i, &entry);
	}
	tap_ok(hot.limit == MF_HOT_ARENA_FIRST && hot.used <= MF_HOT_ARENA_FIRST && hot.shift > 0,
	       "stacks never found again: the arena stays at %u bytes (uses %u), one in %u kept",
	       hot.limit, hot.used, 1u << hot.shift);
	hot = keep;

	/* stacks found again where RLIMIT_AS leaves no room for the arena's mapping: it grows
	 * to the thread state's part, then starts over there */
	{
		struct mf_hot was = hot;
		as_share = MF_HOT_ARENA_MAX - 1;
		ws.f[3].sp = f.sp;
		mf_hot_put(&hot, &ws, 99, &entry); /* (a new epoch starts it over first) */
		uint32_t round0 = hot.round, grown = 0;
		for (uint32_t i = 0; i < 4 * MF_HOT_ARENA / 64 && hot.round == round0; i++) {
			uint32_t had = hot.limit;
			ws.f[3].sp = f.sp - 16 * (i + 1);
			mf_hot_put(&hot, &ws, 100 + i, &entry);
			grown += hot.limit > had;
			g = f;
			g.sp = ws.f[3].sp;
			find(g), find(g); /* (found twice for each kept: they pay) */
		}
		tap_ok(
		    grown == 4 && hot.limit == MF_HOT_ARENA && hot.round != round0 &&
			hot.arena == was.arena,
		    "under RLIMIT_AS: the arena grows to the thread state's %d bytes (%u times), "
		    "then starts over there",
		    MF_HOT_ARENA, grown);
		as_share = SIZE_MAX;
		hot = was;
	}
	/* stacks found again: the arena grows while they pay, keeping them, to its largest (past
	 * the thread state's part, in a mapping of its own), then starts over; they are all kept,
	 * the last is found */
	uint32_t last = 0, found = 0, round = hot.round, n = 4 * MF_HOT_ARENA_MAX / 64;
	const unsigned char *inside = hot.arena;
	unsigned grew = 0, kept = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t had = hot.limit;
		ws.f[3].sp = f.sp - 16 * (i + 1); /* other first frames, same words */
		mf_hot_put(&hot, &ws, last = 100 + i, &entry);
		g = f;
		if (hot.limit > had && i > 0) { /* grown by this put: the one before is there */
			grew++;
			g.sp = f.sp - 16 * i;
			kept += find(g) == last - 1;
		}
		g.sp = ws.f[3].sp;
		found += find(g) == last && find(g) == last;
	}
	tap_ok(grew == 8 && kept == grew,
	       "stacks that pay: the arena doubled %u times, keeping its stacks each time (%u)",
	       grew, kept);
	tap_ok(hot.limit == MF_HOT_ARENA_MAX && hot.used <= MF_HOT_ARENA_MAX && hot.round != round,
	       "... to its %d bytes, and then started over", MF_HOT_ARENA_MAX);
	tap_ok(hot.arena != inside, "... past %d bytes, in a mapping of its own", MF_HOT_ARENA);
	tap_ok(found == n && hot.shift == 0,
	       "stacks found again as often as kept are all kept (%u of %u)", found, n);
	/* stacks never found again: fewer of them are kept as the arena fills with them */
	for (uint32_t i = 0; i < 2 * MF_HOT_ARENA_MAX / 64; i++) {
		ws.f[3].sp = f.sp - 16 * (i + n + 1);
		mf_hot_put(&hot, &ws, 5000 + i, &entry);
	}
	tap_ok(hot.shift > 0, "stacks never found again: one in %u of them is kept",
	       1u << hot.shift);
	return tap_done();
}
