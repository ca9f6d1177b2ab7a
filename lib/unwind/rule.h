/* A frame rule: how to reach a frame's caller from the frame's registers, as cfi.c reads it
 * from .eh_frame, and packed into the one 64-bit word the rule table keeps per return address.
 * The packer and every accessor of the word are here, and nowhere else. */
#ifndef MF_UNWIND_RULE_H
#define MF_UNWIND_RULE_H

#include <stdint.h>

enum {
	MF_CFI_UNKNOWN, /* ask libunwind */
	MF_CFI_STEP,	/* by the fields below */
	MF_CFI_END,	/* the outermost frame */
	/* Code no unwind table covers (JIT code, hand-written assembly): taken to keep a frame
	 * pointer, as JIT compilers do, and as libunwind guesses too: the fields below say
	 * CFA = rbp + 16, rbp saved at CFA - 16; rbp 0 ends the stack, and rbp must lie in the
	 * thread's stack (a guess is never read blindly). */
	MF_CFI_GUESS,
};
struct mf_cfi_rule {
	int32_t cfa_off; /* CFA = (cfa_rbp ? rbp : rsp) + cfa_off; the return address at CFA - 8 */
	int16_t rbp_off; /* the caller's rbp is saved at CFA + rbp_off; 0: rbp is unchanged */
	uint8_t cfa_rbp;
	uint8_t kind;
};

/* The word: kind + 1 (so never 0) | cfa_rbp << 3 | rbp_off << 4 | cfa_off << 20 | epoch << 43.
 * A cfa_off that does not fit its 23 bits makes the rule MF_CFI_UNKNOWN. */
#define MF_RULE_EPOCH_BITS  21
#define MF_RULE_EPOCH_MASK  ((1u << MF_RULE_EPOCH_BITS) - 1)
#define MF_RULE_EPOCH_SHIFT 43

static inline uint64_t mf_rule_pack(const struct mf_cfi_rule *r, uint64_t epoch)
{
	uint64_t kind = r->kind;
	if (r->cfa_off < 0 || r->cfa_off >= (1 << 23))
		kind = MF_CFI_UNKNOWN;
	return (kind + 1) | (uint64_t)(r->cfa_rbp & 1) << 3 | (uint64_t)(uint16_t)r->rbp_off << 4 |
	       (uint64_t)(r->cfa_off & 0x7fffff) << 20 | epoch << MF_RULE_EPOCH_SHIFT;
}

static inline unsigned mf_rule_kind(uint64_t w)
{
	return (unsigned)(w & 7) - 1;
}
static inline int mf_rule_cfa_rbp(uint64_t w)
{
	return (int)(w >> 3) & 1;
}
static inline int16_t mf_rule_rbp_off(uint64_t w)
{
	return (int16_t)(uint16_t)(w >> 4);
}
static inline uint32_t mf_rule_cfa_off(uint64_t w)
{
	return (uint32_t)(w >> 20) & 0x7fffff;
}
static inline uint64_t mf_rule_epoch(uint64_t w)
{
	return w >> MF_RULE_EPOCH_SHIFT;
}
/* A step rule of this epoch is one whose bits under MF_RULE_TAG_MASK equal mf_rule_step_tag. */
#define MF_RULE_TAG_MASK (~0ull << MF_RULE_EPOCH_SHIFT | 7)
static inline uint64_t mf_rule_step_tag(uint64_t epoch)
{
	return epoch << MF_RULE_EPOCH_SHIFT | (MF_CFI_STEP + 1);
}

#endif
