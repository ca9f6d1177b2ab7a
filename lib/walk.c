/* The cached unwinder: the frame rule of each return address, once libunwind has confirmed
 * it, kept in a process-wide table; a capture whose every frame has a rule there is walked
 * here in a few instructions per frame, without libunwind, a lock or a system call.
 *
 * The table is open addressing over a fixed array, filled with compare-and-swap and never
 * cleared: a slot holds one address for ever, and its rule word carries the epoch it was
 * confirmed in. Unloading code may let other code take its addresses, so every possible
 * unload (our dlclose, before and after; the module map noticing one) starts a new epoch,
 * and rules of older epochs are not used. Runs inside malloc: no allocation. */
#include "config.h"

#include <stdint.h>

#include "mf_internal.h"

enum {
	MF_WALK_BITS = 15, /* 32768 slots, 512 KiB of zero pages until used */
	MF_WALK_PROBES = 8,
	MF_WALK_MAX_FRAME = 256 << 20, /* a frame larger than this is taken as a wrong rule */
};

struct mf_walk_slot {
	uintptr_t ra;  /* 0: free */
	uint64_t rule; /* 0: not yet written; else mf_walk_pack() */
};

static struct mf_walk_slot mf_walk_table[1 << MF_WALK_BITS];
static unsigned mf_walk_epoch_count;

static uint64_t mf_walk_epoch(void)
{
	return (__atomic_load_n(&mf_walk_epoch_count, __ATOMIC_ACQUIRE) + mf_modules_generation) &
	       0x1fffff;
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
	return (ra * 0x9e3779b97f4a7c15ull) >> (64 - MF_WALK_BITS);
}

static struct mf_walk_slot *mf_walk_slot(uintptr_t ra, int claim)
{
	uint64_t h = mf_walk_hash(ra);
	for (int i = 0; i < MF_WALK_PROBES; i++) {
		struct mf_walk_slot *s = &mf_walk_table[(h + i) & ((1 << MF_WALK_BITS) - 1)];
		uintptr_t have = __atomic_load_n(&s->ra, __ATOMIC_ACQUIRE);
		if (have == ra)
			return s;
		if (have == 0) {
			if (!claim)
				return NULL;
			if (__atomic_compare_exchange_n(&s->ra, &have, ra, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE) ||
			    have == ra)
				return s;
		}
	}
	return NULL;
}

/* The current rule word of ra, or 0. */
static uint64_t mf_walk_lookup(uintptr_t ra, uint64_t epoch)
{
	struct mf_walk_slot *s = mf_walk_slot(ra, 0);
	if (!s)
		return 0;
	uint64_t w = __atomic_load_n(&s->rule, __ATOMIC_ACQUIRE);
	return w >> 43 == epoch ? w : 0;
}

void mf_walk_remember(uintptr_t ra, const struct mf_cfi_rule *r)
{
	struct mf_walk_slot *s = mf_walk_slot(ra, 1);
	if (s) /* else the table is full there: this address keeps taking the slow path */
		__atomic_store_n(&s->rule, mf_walk_pack(r, mf_walk_epoch()), __ATOMIC_RELEASE);
}

void mf_walk_forget(void)
{
	__atomic_add_fetch(&mf_walk_epoch_count, 1, __ATOMIC_ACQ_REL);
}

int mf_walk(void **pcs, int max, uintptr_t pc, uintptr_t sp, uintptr_t bp)
{
	const uint64_t epoch = mf_walk_epoch(), step = epoch << 43 | (MF_CFI_STEP + 1);
	const uintptr_t first = pc;
	int n = 0;
	while (n < max && pc) {
		pcs[n++] = (void *)pc;
		/* the first probe, inline: a rule is found there nearly always */
		const struct mf_walk_slot *s = &mf_walk_table[mf_walk_hash(pc)];
		uint64_t w = mf_likely(s->ra == pc) ? __atomic_load_n(&s->rule, __ATOMIC_ACQUIRE)
						    : mf_walk_lookup(pc, epoch);
		if (mf_unlikely((w & (~0ull << 43 | 3)) != step)) {
			if (!w || w >> 43 != epoch)
				return mf_unwind_learn(pcs, max, first);
			return (w & 3) == MF_CFI_END + 1 ? n : MF_WALK_SLOW;
		}
		uintptr_t cfa = ((w & 4) ? bp : sp) + (w >> 19 & 0xffffff);
		if (mf_unlikely(cfa - sp - 8 >= MF_WALK_MAX_FRAME || (cfa & 7))) /* not above sp */
			return mf_unwind_learn(pcs, max, first);
		int16_t rbp_off = (int16_t)(uint16_t)(w >> 3);
		if (rbp_off)
			bp = *(const uintptr_t *)(cfa + rbp_off);
		pc = *(const uintptr_t *)(cfa - 8);
		sp = cfa;
	}
	return n;
}
