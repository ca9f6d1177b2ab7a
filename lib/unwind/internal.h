/* The parts of stack capture and how they call each other (lib/unwind/ only):
 *   capture.c     the entry point: which way a stack is found, check mode
 *   hot.c         a thread's hot stacks, found again without a walk
 *   walk.c        the cached walk over a stack, by the rule table's rules
 *   rule_table.c  the process-wide rules by return address, learned and confirmed
 *   cfi.c         a rule read from an object's .eh_frame
 *   rule_cache.c  the rules confirmed in earlier runs, kept in a file
 *   rule_cache_prune.c  the cache's directory kept to its most lately used files
 *   libunwind.c   libunwind: loaded, asked to confirm a rule, or to take a whole stack
 *   got_patch.c   what libunwind calls for a pipe, the signal mask and the loaded objects,
 *                 redirected
 * Everything here runs inside malloc: no malloc, no stdio. */
#ifndef MF_UNWIND_INTERNAL_H
#define MF_UNWIND_INTERNAL_H

#include <stdint.h>

#include "loaded.h"
#include "mf_internal.h"
#include "thread.h"
#include "trie.h"
#include "unwind/rule.h"

/* cfi.c: the rule at pc (an address inside the instruction: a return address minus one). 0;
 * -1 when the frame is not of the simple kinds understood here; MF_CFI_NONE when no unwind
 * table covers pc. Every field of *rule is set (kind MF_CFI_UNKNOWN unless 0 is returned, and
 * with 0 where the return address is still in a register, AArch64's x30). */
enum { MF_CFI_NONE = -2 };
int mf_cfi_find(uintptr_t pc, struct mf_cfi_rule *rule);

/* rule_table.c: rules keyed by return address, holding rules that gave libunwind's answer
 * (mf_unwind_agrees, or an earlier run's: rule_cache.c; in a run without libunwind, rules as
 * read); read without a lock. */
struct mf_rule_table;
/* The table to read now. */
const struct mf_rule_table *mf_rule_table_now(void);
/* A return address without a current rule, in the frame (sp, bp): its rule from .eh_frame,
 * confirmed, kept; returns the rule word. */
uint64_t mf_rule_table_learn(uintptr_t ra, uintptr_t sp, uintptr_t bp, uint64_t epoch);
/* The walk's epoch: the rules (and the stacks walked with them) of another are not used.
 * Every possible unload starts a new one (mf_unwind_forget). It lies in mf_wiped: 0 in a
 * child made without fork()'s handlers, which so finds no hot stack. */
static inline unsigned mf_walk_epoch_now(void)
{
	return __atomic_load_n(&mf_wiped.epoch, __ATOMIC_ACQUIRE);
}
void mf_rule_table_init(void);
void mf_rule_table_forget(void);
void mf_rule_table_postfork_child(void);

/* The table's layout, for the inline first probe. */
struct mf_rule_slot {
	uintptr_t ra;  /* 0: free */
	uint64_t rule; /* 0: not yet written; else mf_rule_pack() */
};
struct mf_rule_table {
	uint64_t mask;
	unsigned used; /* slots claimed */
	struct mf_rule_slot *slots;
};
static inline uint64_t mf_rule_hash(uintptr_t ra)
{
	return (ra * 0x9e3779b97f4a7c15ull) >> 40;
}
/* ra's rule word in t if it is of this epoch, else 0. */
uint64_t mf_rule_table_lookup(const struct mf_rule_table *t, uintptr_t ra, uint64_t epoch);
/* ra's rule word in t, of this epoch or not, or 0; the first probe inline, where a rule is
 * found nearly always. */
static inline uint64_t mf_rule_table_get(const struct mf_rule_table *t, uintptr_t ra,
					 uint64_t epoch)
{
	const struct mf_rule_slot *s = &t->slots[mf_rule_hash(ra) & t->mask];
	return __builtin_expect(s->ra == ra, 1) ? __atomic_load_n(&s->rule, __ATOMIC_ACQUIRE)
						: mf_rule_table_lookup(t, ra, epoch);
}

/* walk.c: walks from the frame of return address pc and returns the frame count:
 * ws->pc[0..count) holds the return addresses, outermost first (pc last). A return address
 * new to the table has its rule learned first. Where a frame is one of the last stack's and
 * nothing above it has changed, the frames above are kept. When a frame needs libunwind,
 * MF_WALK_SLOW is returned and ws->pc is left as it was. */
enum { MF_WALK_SLOW = -2, MF_WALK_BOUNDS = -3 };
/* MF_WALK_BOUNDS: a frame is to be guessed (MF_CFI_GUESS) where ws->stack_lo and stack_hi say
 * nothing of its sp, ws->bounds_sp: set them (mf_stack_bounds), or both to MF_WALK_NO_BOUNDS
 * if the mapping cannot be known, and walk again. */
#define MF_WALK_NO_BOUNDS ((uintptr_t)1)
int mf_walk(struct mf_walk_stacks *ws, int max, uintptr_t pc, uintptr_t sp, uintptr_t bp);
/* For the stack ws holds after a complete walk: the words, innermost first, whose values
 * decide where a new walk from its first frame goes (each frame's return address, and the
 * saved rbp an rbp-based rule further out uses, put just before the first word it places),
 * into c. The first frame's rbp, where a rule uses it, is checked as the word at bp (where
 * the caller puts that register's value). Returns how many, or -1 if there could be more than
 * max (two a frame). The address of each word depends only on the values of the words before it;
 * read innermost first, each lies in a frame the words before it have shown to be the same. */
int mf_walk_checks(const struct mf_walk_stacks *ws, struct mf_walk_check *c, int max,
		   const uintptr_t *bp);

/* stack.c: the mapping [*lo, *hi) that holds sp, from /proc/self/maps; 0, or -1 if none. */
int mf_stack_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi);
/* Is [lo, hi) the calling thread's own stack, which stays mapped while it runs? Another (a
 * coroutine's) may be unmapped, and a smaller one mapped at its place: its bounds serve one walk
 * only. */
int mf_stack_own(uintptr_t lo, uintptr_t hi);

/* hot.c: a call from one of a thread's hot stacks again is counted at its leaf once its words
 * are seen unchanged, without a walk or the trie. Filled only from complete walks. */
/* (mf_hot_find, the hot path's: unwind.h) */
/* Keeps the stack ws holds after a complete walk from frame `from`, counted at leaf. The entry
 * point frame's rbp (a word some stacks check, as the walk read it: from a register) is
 * checked where from->bp lies: mf_sample keeps it there for every call, at one place for one
 * root (a root's pc is one place in one entry point, whose frame, which holds it, lies at the
 * root's sp). Every call of mf_hot_find must keep it there too. */
void mf_hot_put(struct mf_hot *h, const struct mf_walk_stacks *ws, uint32_t leaf,
		const struct mf_frame *from);
/* Forgets every hot stack: mf_hot_find finds none until mf_hot_put keeps new ones. */
void mf_hot_drop(struct mf_hot *h);
/* The thread's state is given back: the arena's mapping, if it moved to one, goes. */
void mf_hot_free(struct mf_hot *h);

/* rule_cache.c: frame rules libunwind confirmed in earlier runs of the program. */
void mf_rules_init(void); /* after mf_modules_init: reads the file */
void mf_rules_save(void); /* at exit: adds this run's confirmations to the file */
int mf_rules_on(void);	  /* there is a cache to look in and add to */
/* The program's last run needed nothing from libunwind beyond the rules in the file. */
int mf_rules_complete(void);
/* This run needed libunwind beyond what the cache spares (it was not loaded, a stack went to
 * unw_backtrace, a rule was refused or could not be kept): the next one must load it. */
void mf_rules_needed(void);
/* The key of the rule at rel_pc in the module of identity module (mf_modules_identity).
 * Never 0. */
uint64_t mf_rules_key(uint64_t module, uint64_t rel_pc);
/* The rule (mf_rule_pack with epoch 0) libunwind confirmed for key in an earlier run, or 0. */
uint64_t mf_rules_known(uint64_t key);
void mf_rules_add(uint64_t key, uint64_t rule); /* libunwind confirmed it in this run */

/* rule_cache_prune.c: at most MF_RULES_FILES files in the cache directory dir (a descriptor),
 * the least lately used removed. */
enum { MF_RULES_FILES = 512 };
void mf_rules_prune(int dir);

/* libunwind.c: the only user of libunwind's functions. */
/* Loads libunwind (at start only: see mf_unwind_init). */
void mf_libunwind_load(void);
/* Does libunwind, stepping from the frame of return address pc (registers sp, bp), reach the
 * caller (or the end of the stack) that rule leads to? 1 or 0; -1 if libunwind was not
 * loaded in this run. */
int mf_unwind_agrees(uintptr_t pc, uintptr_t sp, uintptr_t bp, const struct mf_cfi_rule *rule);
/* unw_backtrace into pcs (at most max, innermost first); -1 if libunwind was not loaded in this
 * run (then the rule cache hears that the next run needs it). In a thread that used it before
 * an unload (mf_unwind_forget), the same stack by unw_step. */
int mf_libunwind_backtrace(void **pcs, int max);
/* Code may be unloaded: libunwind forgets what it cached of frames (but unw_backtrace's trace
 * cache: see mf_libunwind_backtrace). Any thread, a signal handler, inside malloc. */
void mf_libunwind_forget(void);

/* got_patch.c: libunwind's calls for its validation pipe, the signal mask and the loaded
 * objects, redirected in its own GOT. */
/* Points them at ours; says on stderr when it cannot. */
void mf_got_patch_libunwind(void);

#endif
