/* The cached walk: a capture whose every frame has a rule in the rule table is walked here in
 * a few instructions per frame, without libunwind, a lock or a system call. Consecutive stacks
 * of a thread mostly share their outer frames: the walk stops at a frame of the thread's last
 * stack whose words above are unchanged, and keeps the rest. Runs inside malloc. */
#include "config.h"

#include <stdint.h>

#include "unwind/internal.h"

enum {
	MF_WALK_MAX_FRAME = 256 << 20, /* a frame larger than this is taken as a wrong rule */
	MF_WALK_MAX_GUESS = 0x4000,    /* a guessed frame larger than this ends the stack, as
					  libunwind has it */
};

/* Does a frame of a guessed rule (code no unwind table covers), at sp with rbp bp, have a
 * caller? Only where bp lies a little above sp in the stack's mapping, as a frame pointer
 * does, and is not 0 (the end). MF_WALK_BOUNDS: the stack's mapping is not known yet;
 * MF_WALK_SLOW: it cannot be (then libunwind says). */
static int mf_walk_guess(struct mf_walk_stacks *ws, uintptr_t sp, uintptr_t bp)
{
	if (ws->stack_lo == MF_WALK_NO_BOUNDS)
		return MF_WALK_SLOW;
	if (sp < ws->stack_lo || sp >= ws->stack_hi) {
		ws->bounds_sp = sp;
		return MF_WALK_BOUNDS;
	}
	return bp && bp >= sp && bp - sp <= MF_WALK_MAX_GUESS && bp + 16 <= ws->stack_hi;
}

/* Are the frames of the last stack above frame k still there as they were? Each was reached
 * by reading its return address, and with an rbp rule below it its rbp, from the stack: if
 * those words are unchanged, walking on from frame k would read them again and arrive at the
 * same frames. Checked from frame k outwards, which is what makes the reads safe: each word
 * read lies in a frame already shown to be this stack's (the last stack's memory may be gone,
 * a coroutine's stack unmapped). Returns -1 if they are, else the frame whose words changed:
 * no frame inside it can be kept either. */
static int mf_walk_changed(const struct mf_walk_stacks *ws, int k)
{
	for (int i = k - 1; i >= 0; i--) {
		uint64_t w = ws->f[i + 1].rule;
		int32_t rbp_off = mf_rule_rbp_off(w);
		if ((rbp_off && *(const uintptr_t *)(ws->f[i].sp + rbp_off) != ws->f[i].bp) ||
		    mf_ra_strip(*(const uintptr_t *)(ws->f[i].sp + mf_rule_ra_off(w))) != ws->pc[i])
			return i;
	}
	return -1;
}

/* Puts the walk's j fresh frames (innermost first) above frame `at` - 1, outermost first,
 * and folds their hashes. Returns the new frame count. */
static int mf_walk_place(struct mf_walk_stacks *ws, int at, int j)
{
	uint64_t h = at ? ws->f[at - 1].hash : MF_STACK_HASH_SEED;
	for (int i = 0; i < j; i++) {
		uintptr_t pc = ws->fresh_pc[j - 1 - i];
		ws->pc[at + i] = pc;
		ws->f[at + i] = ws->fresh[j - 1 - i];
		ws->f[at + i].hash = h = mf_stack_hash_step(h, pc);
	}
	ws->kept = at;
	return ws->count = at + j;
}

int mf_walk(struct mf_walk_stacks *ws, int max, uintptr_t pc, uintptr_t sp, uintptr_t bp)
{
	const unsigned count = mf_walk_epoch_now();
	const uint64_t epoch = count & MF_RULE_EPOCH_MASK, step = mf_rule_step_tag(epoch);
	const struct mf_rule_table *t = mf_rule_table_now();
	int k = ws->reusable && ws->epoch == count ? ws->count - 1 : -1; /* last stack's frame */
	int j = 0;
	while (j < max && pc >= MF_TRIE_KEY_SPECIAL_MAX) { /* below: not code, as in capture.c */
		/* The same frame as one of the last stack's, with all above it unchanged: those
		 * are the rest of this stack. (sp grows outwards in both.) A frame whose words
		 * changed is not looked at again, nor any inside it: the walk stays linear. */
		while (k >= 0 && ws->f[k].sp < sp)
			k--;
		if (k >= 0 && ws->f[k].sp == sp && ws->pc[k] == pc && ws->f[k].bp == bp &&
		    k + 1 + j <= max) {
			int changed = mf_walk_changed(ws, k);
			if (changed < 0) {
				ws->epoch = count; /* stays reusable */
				return mf_walk_place(ws, k + 1, j);
			}
			k = changed;
		}
		ws->fresh_pc[j] = pc;
		ws->fresh[j].sp = sp, ws->fresh[j].bp = bp;
		uint64_t w = mf_rule_table_get(t, pc, epoch);
		if (mf_unlikely((w & MF_RULE_TAG_MASK) != step)) {
			if (!w || mf_rule_epoch(w) != epoch)
				w = mf_rule_table_learn(pc, sp, bp, epoch);
			unsigned kind = mf_rule_kind(w);
			int guess = kind == MF_CFI_GUESS ? mf_walk_guess(ws, sp, bp) : 1;
			if (guess < 0) {
				ws->cut = j + 1; /* (this frame is known: not its caller) */
				return guess;
			}
			if (kind == MF_CFI_END || !guess) {
				ws->fresh[j++].rule = w;
				ws->reusable = 1; /* complete: the next walk may keep its frames */
				ws->epoch = count;
				return mf_walk_place(ws, 0, j);
			}
			if (kind != MF_CFI_STEP && kind != MF_CFI_GUESS) {
				ws->cut = j + 1;
				return MF_WALK_SLOW;
			}
		}
		ws->fresh[j++].rule = w;
		uintptr_t cfa = (mf_rule_cfa_rbp(w) ? bp : sp) + mf_rule_cfa_off(w);
		if (mf_unlikely(cfa - sp - 8 >= MF_WALK_MAX_FRAME)) { /* not above sp */
			ws->cut = j;
			return MF_WALK_SLOW;
		}
		int32_t rbp_off = mf_rule_rbp_off(w);
		if (rbp_off)
			bp = *(const uintptr_t *)(cfa + rbp_off);
		pc = mf_ra_strip(*(const uintptr_t *)(cfa + mf_rule_ra_off(w)));
		sp = cfa;
	}
	ws->reusable = 0; /* cut short: what lies above is not known */
	return mf_walk_place(ws, 0, j);
}

int mf_walk_checks(const struct mf_walk_stacks *ws, struct mf_walk_check *c, int max,
		   const uintptr_t *bp)
{
	int n = ws->count, k = 0;
	/* From the innermost frame out. The rbp a frame has came from a register (the first
	 * frame's: the word at bp) or from a word one of the steps inside it read; that word is
	 * checked where an rbp-based rule first uses the value, before the words it places. */
	struct mf_walk_check rbp = {bp, ws->f[n - 1].bp};
	int rbp_checked = 0;
	if (2 * n > max) /* (at most two words a frame) */
		return -1;
	for (int i = n - 1; i >= 1; i--) {
		uint64_t w = ws->f[i].rule;
		uintptr_t cfa = ws->f[i - 1].sp;
		if (mf_rule_cfa_rbp(w) && !rbp_checked) {
			c[k++] = rbp;
			rbp_checked = 1;
		}
		/* (the word as it lies: a signed return address on AArch64, which the walk just
		 * read there) */
		const uintptr_t *ra = (const uintptr_t *)(cfa + mf_rule_ra_off(w));
		c[k++] = (struct mf_walk_check){ra, MF_RA_SIGNED ? *ra : ws->pc[i - 1]};
		int32_t rbp_off = mf_rule_rbp_off(w);
		if (rbp_off) {
			rbp = (struct mf_walk_check){(const uintptr_t *)(cfa + rbp_off),
						     ws->f[i - 1].bp};
			rbp_checked = 0;
		}
	}
	/* A guessed frame ended the stack by its rbp. */
	if (mf_rule_kind(ws->f[0].rule) == MF_CFI_GUESS && !rbp_checked)
		c[k++] = rbp;
	return k;
}
