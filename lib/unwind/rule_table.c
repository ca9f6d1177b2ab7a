/* The rule table: the frame rule of each return address, once libunwind has confirmed it (in
 * this run or an earlier one; unconfirmed only in a run that has no libunwind), process-wide.
 *
 * Open addressing, filled with compare-and-swap: a slot holds one address for ever, and its
 * rule word carries the epoch it was confirmed in. Unloading code may let other code take its
 * addresses, so every possible unload (our dlclose, before and after; the module map noticing
 * one) starts a new epoch, and rules of older epochs are not used. The table starts small (a
 * short process touches a few pages) and is replaced by one four times larger when half full;
 * old tables stay mapped, as a walk may still be reading one, and a rule written to an old
 * table meanwhile is merely learned again. Runs inside malloc: no allocation but mmap. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fork.h"
#include "thread.h"
#include "unwind/internal.h"

enum {
	MF_RULE_FIRST_SLOTS = 256,   /* one page, in .bss */
	MF_RULE_MAX_SLOTS = 1 << 18, /* 4 MiB: beyond, new addresses are learned each time */
	MF_RULE_PROBES = 8,
};

static struct mf_rule_slot mf_rule_first[MF_RULE_FIRST_SLOTS]
    __attribute__((aligned(MF_PAGE_SIZE)));
static struct mf_rule_table mf_rule_tables[8] = {{MF_RULE_FIRST_SLOTS - 1, 0, mf_rule_first}};
static struct mf_rule_table *mf_rule_current = &mf_rule_tables[0];
static int mf_rule_growing;
static unsigned mf_epoch_kept;	 /* mf_wiped.epoch, where a raw fork's child finds it */
static unsigned mf_rule_era = 0; /* epoch >> MF_RULE_EPOCH_BITS when rules were last cleared */

const struct mf_rule_table *mf_rule_table_now(void)
{
	return __atomic_load_n(&mf_rule_current, __ATOMIC_ACQUIRE);
}

/* After two million epochs their numbers in the rule words come round again: a rule that
 * old would pass for a current one. So every rule word goes then; slots keep their address,
 * and walks reading meanwhile see a rule or nothing. */
static void mf_rule_clear_if_wrapped(unsigned now)
{
	if (__atomic_load_n(&mf_rule_era, __ATOMIC_ACQUIRE) == now >> MF_RULE_EPOCH_BITS)
		return;
	__atomic_store_n(&mf_rule_era, now >> MF_RULE_EPOCH_BITS, __ATOMIC_RELEASE);
	for (struct mf_rule_table *t = mf_rule_tables; t < mf_rule_tables + 8 && t->slots; t++)
		for (uint64_t i = 0; i <= t->mask; i++)
			__atomic_store_n(&t->slots[i].rule, 0, __ATOMIC_RELEASE);
}

/* ra's slot in t, NULL if absent; with claim, a free one is taken (and *claimed set). */
static struct mf_rule_slot *mf_rule_slot(const struct mf_rule_table *t, uintptr_t ra, int *claimed)
{
	uint64_t h = mf_rule_hash(ra);
	for (int i = 0; i < MF_RULE_PROBES; i++) {
		struct mf_rule_slot *s = &t->slots[(h + i) & t->mask];
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

uint64_t mf_rule_table_lookup(const struct mf_rule_table *t, uintptr_t ra, uint64_t epoch)
{
	struct mf_rule_slot *s = mf_rule_slot(t, ra, NULL);
	if (!s)
		return 0;
	uint64_t w = __atomic_load_n(&s->rule, __ATOMIC_ACQUIRE);
	return mf_rule_epoch(w) == epoch ? w : 0;
}

/* Replaces a half-full table by one four times larger holding the same rules. */
static void mf_rule_table_grow(struct mf_rule_table *old)
{
	if (__atomic_exchange_n(&mf_rule_growing, 1, __ATOMIC_ACQUIRE))
		return; /* another thread is at it */
	uint64_t slots = (old->mask + 1) * 4;
	struct mf_rule_table *t = old + 1;
	if (slots <= MF_RULE_MAX_SLOTS && t < mf_rule_tables + 8 &&
	    __atomic_load_n(&mf_rule_current, __ATOMIC_ACQUIRE) == old) {
		void *p = mf_pages_new(slots * sizeof(struct mf_rule_slot));
		if (p) {
			t->slots = p;
			t->mask = slots - 1;
			for (uint64_t i = 0; i <= old->mask; i++) {
				uintptr_t ra = __atomic_load_n(&old->slots[i].ra, __ATOMIC_ACQUIRE);
				uint64_t w = __atomic_load_n(&old->slots[i].rule, __ATOMIC_ACQUIRE);
				int claimed = 0;
				struct mf_rule_slot *s =
				    ra && w ? mf_rule_slot(t, ra, &claimed) : NULL;
				if (s)
					s->rule = w;
				t->used += (unsigned)claimed;
			}
			__atomic_store_n(&mf_rule_current, t, __ATOMIC_RELEASE);
		}
	}
	__atomic_store_n(&mf_rule_growing, 0, __ATOMIC_RELEASE);
}

/* ra's rule word w into the current table (unless it is full there: then ra is learned each
 * time); w. */
static uint64_t mf_rule_table_put(uintptr_t ra, uint64_t w)
{
	struct mf_rule_table *t = __atomic_load_n(&mf_rule_current, __ATOMIC_ACQUIRE);
	int claimed = 0;
	struct mf_rule_slot *s = mf_rule_slot(t, ra, &claimed);
	if (s) /* else the table is full there: this address is learned each time */
		__atomic_store_n(&s->rule, w, __ATOMIC_RELEASE);
	if ((!s || claimed) &&
	    __atomic_add_fetch(&t->used, 1, __ATOMIC_RELAXED) > (t->mask + 1) / 2)
		mf_rule_table_grow(t);
	return w;
}

/* Is ra a signal's return trampoline that no unwind table covers (AArch64: mov x8, #139;
 * svc #0, as qemu-user writes it where the kernel has a vDSO)? Its caller is the kernel's
 * signal frame, which a frame pointer's guess would step past the interrupted frame: libunwind
 * knows those two instructions. (Read by the kernel: ra may be no code at all.) */
static int mf_rule_sigreturn(uintptr_t ra)
{
#if defined(__aarch64__)
	uint32_t insn[2];
	struct iovec local = {insn, sizeof(insn)}, remote = {(void *)ra, sizeof(insn)};
	ssize_t got = process_vm_readv(gettid(), &local, 1, &remote, 1, 0);
	if (got < 0 && errno == ENOSYS) /* (qemu-user has none: there, ra is read as code) */
		memcpy(insn, (const void *)ra, sizeof(insn)), got = sizeof(insn);
	return got == sizeof(insn) && insn[0] == 0xd2801168 && insn[1] == 0xd4000001;
#else
	(void)ra;
	return 0;
#endif
}

/* A return address new in this epoch, in the frame (sp, bp): its rule as libunwind confirmed
 * it in an earlier run (rule_cache.c); else from .eh_frame, kept if libunwind agrees, else
 * kept as one that needs libunwind; in a run without libunwind, or where the return address
 * is saved signed, kept as read. Where no unwind table covers it, a frame pointer is guessed. */
MF_NOINLINE uint64_t mf_rule_table_learn(uintptr_t ra, uintptr_t sp, uintptr_t bp, uint64_t epoch)
{
	mf_rule_clear_if_wrapped(mf_walk_epoch_now());
	uint64_t key = 0, rel_pc, module, known;
	if (mf_rules_on() && (module = mf_modules_identity(ra, &rel_pc)))
		key = mf_rules_key(module, rel_pc);
	if (key && (known = mf_rules_known(key)))
		return mf_rule_table_put(ra, known | epoch << MF_RULE_EPOCH_SHIFT);
	struct mf_cfi_rule r;
	int found = mf_cfi_find(ra - 1, &r);
	if (found == MF_CFI_NONE && mf_rule_sigreturn(ra)) {
		r.kind = MF_CFI_UNKNOWN;
		mf_rules_needed(); /* (every run: the trampoline is found where it lies) */
	} else if (found == MF_CFI_NONE) {
		/* No unwind table covers it (JIT code, hand-written assembly): a frame pointer is
		 * guessed, each time within the stack (walk.c). Not libunwind's to confirm: its
		 * own guess would give the caller a wrong stack pointer. */
		r = (struct mf_cfi_rule){16, -16, 1, MF_CFI_GUESS, -8, 0};
	} else {
		/* An FDE not understood here: an end if libunwind ends there too, else
		 * libunwind's. (-1: no libunwind in this run; then the rule as read, if there is
		 * one.) */
		if (found)
			r.kind = MF_CFI_END;
		/* Holding the loader's lock, libunwind cannot be asked: the rule as read serves
		 * this walk, and is kept once libunwind has confirmed it in a later one. */
		if (mf_unlikely(mf_tls.loader_held)) {
			if (found)
				r.kind = MF_CFI_UNKNOWN;
			return mf_rule_pack(&r, epoch);
		}
		mf_fork_hold(); /* libunwind */
		int agrees = mf_unwind_agrees(ra, sp, bp, &r);
		/* A return address saved signed (AArch64's pointer authentication): libunwind 1.6
		 * steps over no such frame, so its refusal says nothing of the rule; the rule as
		 * read serves, unconfirmed, as in a run without libunwind (never kept in the rule
		 * cache: the next run asks again). */
		int unconfirmed = agrees == 0 && !found && r.ra_signed;
		if (!unconfirmed && (agrees == 0 || (agrees < 0 && found)))
			r.kind = MF_CFI_UNKNOWN;
		if (agrees == 0 || (agrees > 0 && (!key || found)))
			mf_rules_needed(); /* the next run needs libunwind for it again */
		else if (agrees > 0)
			mf_rules_add(key, mf_rule_pack(&r, 0));
	}
	return mf_rule_table_put(ra, mf_rule_pack(&r, epoch));
}

void mf_rule_table_init(void)
{
	mf_pages_touch(mf_rule_first, sizeof(mf_rule_first));
	mf_wiped.epoch = mf_epoch_kept = 1;
}

void mf_rule_table_postfork_child(void)
{
	mf_rule_growing = 0; /* only ever set under the fork lock, but to be sure */
	__atomic_store_n(&mf_wiped.epoch, mf_epoch_kept, __ATOMIC_RELEASE);
}

/* Our dlclose calls, and unloads the module map noticed (glibc's own, say, of iconv modules). */
void mf_rule_table_forget(void)
{
	unsigned now = __atomic_add_fetch(&mf_wiped.epoch, 1, __ATOMIC_ACQ_REL);
	if (!now) /* (never 0 but in a raw fork's child) */
		now = __atomic_add_fetch(&mf_wiped.epoch, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&mf_epoch_kept, now, __ATOMIC_RELAXED);
}
