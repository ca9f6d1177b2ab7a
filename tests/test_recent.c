/* The recent stacks (lib/unwind/recent.c) and the words that decide a walk (mf_walk_checks in
 * lib/unwind/walk.c), on stacks built by hand in an array: which words are checked, which rbp
 * values matter (through an rbp-based rule, passed on through frames that leave rbp alone,
 * or not at all), and that a kept stack is found only while every such word, the first
 * frame, the epoch and the entry point are the same. The rule words are packed by
 * mf_rule_pack (lib/unwind/rule.h), as the rule table packs them. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "unwind/internal.h"
#include "tap.h"

/* What the walk and the rule table need from the rest of the library, unused here. */
MF_TLS struct mf_tls mf_tls;
pthread_rwlock_t mf_fork_lock = PTHREAD_RWLOCK_INITIALIZER;
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
uint64_t mf_rules_key(uint64_t module, uint64_t rel_pc, uint64_t rule)
{
	return module ^ rel_pc ^ rule;
}
int mf_rules_on(void)
{
	return 0;
}
int mf_rules_known(uint64_t key)
{
	(void)key;
	return 0;
}
void mf_rules_add(uint64_t key)
{
	(void)key;
}
void mf_rules_needed(void) {}

static uint64_t rule(int cfa_rbp, int16_t rbp_off, int32_t cfa_off)
{
	struct mf_cfi_rule r = {cfa_off, rbp_off, (uint8_t)cfa_rbp, MF_CFI_STEP};
	return mf_rule_pack(&r, mf_walk_epoch_now() & MF_RULE_EPOCH_MASK);
}

static uint64_t end_rule(void)
{
	struct mf_cfi_rule r = {0, 0, 0, MF_CFI_END};
	return mf_rule_pack(&r, mf_walk_epoch_now() & MF_RULE_EPOCH_MASK);
}

enum { PC3 = 0x401000, PC2 = 0x402000, PC1 = 0x403000, PC0 = 0x404000 };

static uintptr_t mem[64];	 /* the stack: higher index, higher address (outer frames) */
static struct mf_walk_stacks ws; /* large: not on the test's stack */
static struct mf_recent recent;
static _Alignas(16) unsigned char arena[MF_RECENT_ARENA];

#define AT(i) ((uintptr_t)&mem[i])

/* Four frames, innermost (3, the entry point's) to outermost (0, where the walk ends):
 *   3: CFA = sp + 16, rbp untouched (frame 2's rbp is frame 3's)
 *   2: CFA = sp + 32; if saves_rbp, rbp saved at CFA - 24, else untouched
 *   1: CFA = rbp + 16, rbp saved at CFA - 16 (a frame-pointer frame)
 *   0: the end.
 * Returns frame 3 as a walk starts from it. */
static struct mf_frame build(int saves_rbp)
{
	memset(mem, 0, sizeof(mem));
	uintptr_t sp3 = AT(4), bp3 = AT(30), cfa3 = sp3 + 16, cfa2 = cfa3 + 32;
	uintptr_t bp1 = saves_rbp ? AT(40) : bp3, cfa1 = bp1 + 16;
	mem[(cfa3 - 8 - AT(0)) / 8] = PC2;
	mem[(cfa2 - 8 - AT(0)) / 8] = PC1;
	if (saves_rbp)
		mem[(cfa2 - 24 - AT(0)) / 8] = bp1;
	mem[(cfa1 - 8 - AT(0)) / 8] = PC0;
	mem[(cfa1 - 16 - AT(0)) / 8] = 0x77; /* frame 0's rbp: used by no rule */
	ws.count = 4;
	ws.epoch = mf_walk_epoch_now();
	ws.reusable = 1;
	uintptr_t pcs[4] = {PC0, PC1, PC2, PC3};
	uintptr_t sps[4] = {cfa1, cfa2, cfa3, sp3};
	uintptr_t bps[4] = {0x77, bp1, bp3, bp3};
	uint64_t rules[4] = {end_rule(), rule(1, -16, 16), rule(0, saves_rbp ? -24 : 0, 32),
			     rule(0, 0, 16)};
	for (int i = 0; i < 4; i++) {
		ws.pc[i] = pcs[i];
		ws.f[i].sp = sps[i];
		ws.f[i].bp = bps[i];
		ws.f[i].rule = rules[i];
	}
	return (struct mf_frame){PC3, sp3, bp3, PC2};
}

static uint32_t find(struct mf_frame f)
{
	return mf_recent_find(&recent, MF_ENTRY_MALLOC, &f);
}

int main(void)
{
	recent.arena = arena;
	struct mf_walk_check c[16];
	uintptr_t mask = 1;

	/* rbp passed on untouched from the entry point's frame to an rbp-based rule */
	struct mf_frame f = build(0);
	int k = mf_walk_checks(&ws, c, 16, &mask);
	tap_ok(k == 3, "frame pointer reached through untouched rbp: 3 words checked (got %d)", k);
	tap_ok(k == 3 && c[0].at == (const uintptr_t *)(f.sp + 16 - 8) && c[0].was == PC2 &&
		   c[1].was == PC1 && c[2].was == PC0,
	       "... the return addresses, innermost first");
	tap_ok(mask == ~(uintptr_t)0, "... and the entry point's rbp matters");
	mf_recent_put(&recent, &ws, MF_ENTRY_MALLOC, 42);
	tap_ok(find(f) == 42, "the same stack is found at its leaf");
	struct mf_frame g = f;
	g.bp += 64;
	tap_ok(find(g) == 0, "not with another rbp in the entry point's frame");
	g = f;
	g.sp += 8;
	tap_ok(find(g) == 0, "not from another sp");
	tap_ok(mf_recent_find(&recent, MF_ENTRY_CALLOC, &f) == 0, "not for another entry point");
	mem[(f.sp + 16 + 32 - 8 - AT(0)) / 8] = PC1 + 4;
	tap_ok(find(f) == 0, "not once a return address further out changed");
	mem[(f.sp + 16 + 32 - 8 - AT(0)) / 8] = PC1;
	mem[(f.bp + 16 - 16 - AT(0)) / 8] = 0x99;
	tap_ok(find(f) == 42, "but still when frame 0's saved rbp changed: no rule uses it");
	mf_modules_generation++;
	tap_ok(find(f) == 0, "not in another epoch");

	/* frame 2 saves rbp: the entry point's no longer matters, the saved word does */
	f = build(1);
	k = mf_walk_checks(&ws, c, 16, &mask);
	tap_ok(k == 4 && mask == 0,
	       "rbp saved on the way: 4 words, the entry point's rbp unused (got %d, mask %lx)", k,
	       (unsigned long)mask);
	mf_recent_put(&recent, &ws, MF_ENTRY_MALLOC, 43);
	g = f;
	g.bp += 64;
	tap_ok(find(g) == 43, "found whatever the entry point's rbp");
	mem[(f.sp + 16 + 32 - 24 - AT(0)) / 8] += 64;
	tap_ok(find(f) == 0, "not once the saved rbp changed");
	mem[(f.sp + 16 + 32 - 24 - AT(0)) / 8] -= 64;
	tap_ok(find(f) == 43, "found again once it is back");
	tap_ok(mf_walk_checks(&ws, c, 3, &mask) == -1, "more words than allowed: -1");

	/* the arena fills and starts over; the stack kept last is found */
	uint32_t last = 0;
	for (uint32_t i = 0; i < 3000; i++) {
		ws.f[3].sp = f.sp - 16 * (i % 50); /* other first frames, same words */
		mf_recent_put(&recent, &ws, MF_ENTRY_MALLOC, last = 100 + i);
	}
	tap_ok(recent.used <= MF_RECENT_ARENA, "the arena stays within its %d bytes",
	       MF_RECENT_ARENA);
	g = f;
	g.sp = ws.f[3].sp;
	tap_ok(find(g) == last, "after 3000 stacks the last one is found (%u)", last);
	return tap_done();
}
