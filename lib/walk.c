/* The cached unwinder: the frame rule of each return address, once libunwind has confirmed
 * it (in this run or an earlier one; unconfirmed only in a run that has no libunwind), kept
 * in a process-wide table; a capture whose every frame has a rule there is walked
 * here in a few instructions per frame, without libunwind, a lock or a system call.
 *
 * The table is open addressing, filled with compare-and-swap: a slot holds one address for
 * ever, and its rule word carries the epoch it was confirmed in. Unloading code may let other
 * code take its addresses, so every possible unload (our dlclose, before and after; the
 * module map noticing one) starts a new epoch, and rules of older epochs are not used. The
 * table starts small (a short process touches a few pages) and is replaced by one four times
 * larger when half full; old tables stay mapped, as a walk may still be reading one, and a
 * rule written to an old table meanwhile is merely learned again. Runs inside malloc: no
 * allocation but mmap. */
#include "config.h"

#include <stdint.h>
#include <sys/mman.h>

#include "mf_internal.h"

enum {
	MF_WALK_FIRST_SLOTS = 256,   /* one page, in .bss */
	MF_WALK_MAX_SLOTS = 1 << 18, /* 4 MiB: beyond, new addresses are learned each time */
	MF_WALK_PROBES = 8,
	MF_WALK_MAX_FRAME = 256 << 20, /* a frame larger than this is taken as a wrong rule */
};

struct mf_walk_slot {
	uintptr_t ra;  /* 0: free */
	uint64_t rule; /* 0: not yet written; else mf_walk_pack() */
};

struct mf_walk_table {
	uint64_t mask;
	unsigned used; /* slots claimed */
	struct mf_walk_slot *slots;
};

static struct mf_walk_slot mf_walk_first[MF_WALK_FIRST_SLOTS] __attribute__((aligned(4096)));
static struct mf_walk_table mf_walk_tables[8] = {{MF_WALK_FIRST_SLOTS - 1, 0, mf_walk_first}};
static struct mf_walk_table *mf_walk_current = &mf_walk_tables[0];
static int mf_walk_growing;
static unsigned mf_walk_epoch_count;

#define MF_WALK_EPOCH_MASK 0x1fffffu /* 21 bits of the rule word */
static unsigned mf_walk_era = 0;     /* epoch >> 21 when the rules were last all cleared */

/* Our dlclose calls, and unloads the module map noticed (glibc's own, say, of iconv modules). */
unsigned mf_walk_epoch_now(void)
{
	return __atomic_load_n(&mf_walk_epoch_count, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&mf_modules_generation, __ATOMIC_ACQUIRE);
}

/* After two million epochs their numbers in the rule words come round again: a rule that
 * old would pass for a current one. So every rule word goes then; slots keep their address,
 * and walks reading meanwhile see a rule or nothing. */
static void mf_walk_clear_if_wrapped(unsigned now)
{
	if (__atomic_load_n(&mf_walk_era, __ATOMIC_ACQUIRE) == now >> 21)
		return;
	__atomic_store_n(&mf_walk_era, now >> 21, __ATOMIC_RELEASE);
	for (struct mf_walk_table *t = mf_walk_tables; t < mf_walk_tables + 8 && t->slots; t++)
		for (uint64_t i = 0; i <= t->mask; i++)
			__atomic_store_n(&t->slots[i].rule, 0, __ATOMIC_RELEASE);
}

/* kind + 1 (so never 0) | cfa_rbp << 2 | rbp_off << 3 | cfa_off << 19 | epoch << 43 */
static uint64_t mf_walk_pack(const struct mf_cfi_rule *r, uint64_t epoch)
{
	uint64_t kind = r->kind;
	if (r->cfa_off < 0 || r->cfa_off >= (1 << 24))
		kind = MF_CFI_UNKNOWN;
	return (kind + 1) | (uint64_t)(r->cfa_rbp & 1) << 2 | (uint64_t)(uint16_t)r->rbp_off << 3 |
	       (uint64_t)(r->cfa_off & 0xffffff) << 19 | epoch << 43;
}

static inline uint64_t mf_walk_hash(uintptr_t ra)
{
	return (ra * 0x9e3779b97f4a7c15ull) >> 40;
}

/* ra's slot in t, NULL if absent; with claim, a free one is taken (and *claimed set). */
static struct mf_walk_slot *mf_walk_slot(const struct mf_walk_table *t, uintptr_t ra, int *claimed)
{
	uint64_t h = mf_walk_hash(ra);
	for (int i = 0; i < MF_WALK_PROBES; i++) {
		struct mf_walk_slot *s = &t->slots[(h + i) & t->mask];
		uintptr_t have = __atomic_load_n(&s->ra, __ATOMIC_ACQUIRE);
		if (have == ra)
			return s;
		if (have == 0) {
			if (!claimed)
				return NULL;
			if (__atomic_compare_exchange_n(&s->ra, &have, ra, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				*claimed = 1;
				return s;
			}
			if (have == ra)
				return s;
		}
	}
	return NULL;
}

/* The current rule word of ra in t, or 0. */
static uint64_t mf_walk_lookup(const struct mf_walk_table *t, uintptr_t ra, uint64_t epoch)
{
	struct mf_walk_slot *s = mf_walk_slot(t, ra, NULL);
	if (!s)
		return 0;
	uint64_t w = __atomic_load_n(&s->rule, __ATOMIC_ACQUIRE);
	return w >> 43 == epoch ? w : 0;
}

/* Replaces a half-full table by one four times larger holding the same rules. */
static void mf_walk_grow(struct mf_walk_table *old)
{
	if (__atomic_exchange_n(&mf_walk_growing, 1, __ATOMIC_ACQUIRE))
		return; /* another thread is at it */
	uint64_t slots = (old->mask + 1) * 4;
	struct mf_walk_table *t = old + 1;
	if (slots <= MF_WALK_MAX_SLOTS && t < mf_walk_tables + 8 &&
	    __atomic_load_n(&mf_walk_current, __ATOMIC_ACQUIRE) == old) {
		void *p = mf_pages_new(slots * sizeof(struct mf_walk_slot));
		if (p) {
			t->slots = p;
			t->mask = slots - 1;
			for (uint64_t i = 0; i <= old->mask; i++) {
				uintptr_t ra = __atomic_load_n(&old->slots[i].ra, __ATOMIC_ACQUIRE);
				uint64_t w = __atomic_load_n(&old->slots[i].rule, __ATOMIC_ACQUIRE);
				int claimed = 0;
				struct mf_walk_slot *s =
				    ra && w ? mf_walk_slot(t, ra, &claimed) : NULL;
				if (s)
					s->rule = w;
				t->used += (unsigned)claimed;
			}
			__atomic_store_n(&mf_walk_current, t, __ATOMIC_RELEASE);
		}
	}
	__atomic_store_n(&mf_walk_growing, 0, __ATOMIC_RELEASE);
}

/* A return address new in this epoch, in the frame (sp, bp): its rule from .eh_frame, kept
 * if libunwind agrees (now or in an earlier run: rules.c), else kept as one that needs
 * libunwind; in a run without libunwind, kept as read. Returns the rule word. */
static MF_NOINLINE uint64_t mf_walk_learn(uintptr_t ra, uintptr_t sp, uintptr_t bp, uint64_t epoch)
{
	mf_fork_hold(); /* libunwind */
	mf_walk_clear_if_wrapped(mf_walk_epoch_now());
	struct mf_cfi_rule r;
	/* No rule: an end if libunwind ends there too (ld.so's entry). Where no unwind table
	 * covers the address, libunwind goes by rbp and ends where it is 0: only that end is kept
	 * across runs. */
	int found = mf_cfi_find(ra - 1, &r);
	uint64_t key = 0, rel_pc, module, none = found == MF_CFI_NONE;
	if (found)
		r.kind = MF_CFI_END;
	if ((!found || (none && !bp)) && mf_rules_on()) {
		int cancel = mf_nocancel_begin(); /* (the module map may be rewritten) */
		if ((module = mf_modules_identity(ra, &rel_pc)))
			key = mf_rules_key(module, rel_pc, mf_walk_pack(&r, 0) | none << 63);
		mf_nocancel_end(cancel);
	}
	if (!key || !mf_rules_known(key)) {
		/* (-1: no libunwind in this run; then the rule as read, if there is one) */
		int agrees = mf_unwind_agrees(ra, sp, bp, &r);
		if (agrees == 0 || (agrees < 0 && found))
			r.kind = MF_CFI_UNKNOWN;
		if (agrees == 0 || (agrees > 0 && !key))
			mf_rules_needed(); /* the next run needs libunwind for it again */
		else if (agrees > 0)
			mf_rules_add(key);
	}
	uint64_t w = mf_walk_pack(&r, epoch);
	struct mf_walk_table *t = __atomic_load_n(&mf_walk_current, __ATOMIC_ACQUIRE);
	int claimed = 0;
	struct mf_walk_slot *s = mf_walk_slot(t, ra, &claimed);
	if (s) /* else the table is full there: this address is learned each time */
		__atomic_store_n(&s->rule, w, __ATOMIC_RELEASE);
	if ((!s || claimed) &&
	    __atomic_add_fetch(&t->used, 1, __ATOMIC_RELAXED) > (t->mask + 1) / 2)
		mf_walk_grow(t);
	return w;
}

void mf_walk_init(void)
{
	mf_pages_touch(mf_walk_first, sizeof(mf_walk_first));
}

void mf_walk_postfork_child(void)
{
	mf_walk_growing = 0; /* only ever set under the fork lock, but to be sure */
}

void mf_walk_forget(void)
{
	__atomic_add_fetch(&mf_walk_epoch_count, 1, __ATOMIC_ACQ_REL);
}

/* Are the frames of the last stack above frame k still there as they were? Each was reached
 * by reading its return address, and with an rbp rule below it its rbp, from the stack: if
 * those words are unchanged, walking on from frame k would read them again and arrive at the
 * same frames. Checked from frame k outwards, which is what makes the reads safe: each word
 * read lies in a frame already shown to be this stack's (the last stack's memory may be gone,
 * a coroutine's stack unmapped). */
static int mf_walk_unchanged(const struct mf_walk_stacks *ws, int k)
{
	for (int i = k - 1; i >= 0; i--) {
		int16_t rbp_off = (int16_t)(uint16_t)(ws->f[i + 1].rule >> 3);
		if ((rbp_off && *(const uintptr_t *)(ws->f[i].sp + rbp_off) != ws->f[i].bp) ||
		    *(const uintptr_t *)(ws->f[i].sp - 8) != ws->pc[i])
			return 0;
	}
	return 1;
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
	return ws->count = at + j;
}

int mf_walk(struct mf_walk_stacks *ws, int max, uintptr_t pc, uintptr_t sp, uintptr_t bp)
{
	const unsigned count = mf_walk_epoch_now();
	const uint64_t epoch = count & MF_WALK_EPOCH_MASK, step = epoch << 43 | (MF_CFI_STEP + 1);
	const struct mf_walk_table *t = __atomic_load_n(&mf_walk_current, __ATOMIC_ACQUIRE);
	int k = ws->reusable && ws->epoch == count ? ws->count - 1 : -1; /* last stack's frame */
	int j = 0;
	while (j < max && pc >= MF_TRIE_KEY_SPECIAL_MAX) { /* below: not code, as in mf_unwind */
		/* The same frame as one of the last stack's, with all above it unchanged: those
		 * are the rest of this stack. (sp grows outwards in both.) */
		while (k >= 0 && ws->f[k].sp < sp)
			k--;
		if (k >= 0 && ws->f[k].sp == sp && ws->pc[k] == pc && ws->f[k].bp == bp &&
		    k + 1 + j <= max && mf_walk_unchanged(ws, k)) {
			ws->epoch = count; /* stays reusable */
			return mf_walk_place(ws, k + 1, j);
		}
		ws->fresh_pc[j] = pc;
		ws->fresh[j].sp = sp, ws->fresh[j].bp = bp;
		/* the first probe, inline: a rule is found there nearly always */
		const struct mf_walk_slot *s = &t->slots[mf_walk_hash(pc) & t->mask];
		uint64_t w = mf_likely(s->ra == pc) ? __atomic_load_n(&s->rule, __ATOMIC_ACQUIRE)
						    : mf_walk_lookup(t, pc, epoch);
		if (mf_unlikely((w & (~0ull << 43 | 3)) != step)) {
			if (!w || w >> 43 != epoch)
				w = mf_walk_learn(pc, sp, bp, epoch);
			if ((w & 3) == MF_CFI_END + 1) {
				ws->fresh[j++].rule = w;
				ws->reusable = 1; /* complete: the next walk may keep its frames */
				ws->epoch = count;
				return mf_walk_place(ws, 0, j);
			}
			if ((w & 3) != MF_CFI_STEP + 1)
				return MF_WALK_SLOW;
		}
		ws->fresh[j++].rule = w;
		uintptr_t cfa = ((w & 4) ? bp : sp) + (w >> 19 & 0xffffff);
		if (mf_unlikely(cfa - sp - 8 >= MF_WALK_MAX_FRAME)) /* not above sp */
			return MF_WALK_SLOW;
		int16_t rbp_off = (int16_t)(uint16_t)(w >> 3);
		if (rbp_off)
			bp = *(const uintptr_t *)(cfa + rbp_off);
		pc = *(const uintptr_t *)(cfa - 8);
		sp = cfa;
	}
	ws->reusable = 0; /* cut short: what lies above is not known */
	return mf_walk_place(ws, 0, j);
}

int mf_walk_checks(const struct mf_walk_stacks *ws, struct mf_walk_check *c, int max,
		   uintptr_t *bp_mask)
{
	int n = ws->count, k = 0;
	if (n < 1 || n - 1 > max)
		return -1;
	/* From the outermost frame in: `used` says whether frame i's rbp decides where a frame
	 * further out is, through its own rule (rbp-based) or, passed on unchanged, through an
	 * outer one's; the words of each step are put down outermost first, then turned round. */
	int used = 0; /* frame 0's: its rule ends the walk */
	for (int i = 1; i < n; i++) {
		uint64_t w = ws->f[i].rule;
		uintptr_t cfa = ws->f[i - 1].sp;
		int16_t rbp_off = (int16_t)(uint16_t)(w >> 3);
		int bp = rbp_off && used;
		if (k + 1 + bp > max)
			return -1;
		if (bp)
			c[k++] = (struct mf_walk_check){(const uintptr_t *)(cfa + rbp_off),
							ws->f[i - 1].bp};
		c[k++] = (struct mf_walk_check){(const uintptr_t *)(cfa - 8), ws->pc[i - 1]};
		used = (w & 4) || (!rbp_off && used);
	}
	for (int i = 0; i < k / 2; i++) {
		struct mf_walk_check t = c[i];
		c[i] = c[k - 1 - i];
		c[k - 1 - i] = t;
	}
	*bp_mask = used ? ~(uintptr_t)0 : 0;
	return k;
}
