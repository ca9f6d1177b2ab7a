/* A frame rule: how to reach a frame's caller from the frame's registers, as cfi.c reads it
 * from .eh_frame, and packed into the one 64-bit word the rule table keeps per return address.
 * The packer and every accessor of the word are here, and nowhere else; the packing is the
 * processor's. On AArch64 "rbp" is x29, the frame record's pointer, and "rsp" is sp. */
#ifndef MF_UNWIND_RULE_H
#define MF_UNWIND_RULE_H

#include <stdint.h>

enum {
	MF_CFI_UNKNOWN, /* ask libunwind */
	MF_CFI_STEP,	/* by the fields below */
	MF_CFI_END,	/* the outermost frame */
	/* Code no unwind table covers (JIT code, hand-written assembly): taken to keep a frame
	 * pointer, as JIT compilers do, and as libunwind guesses too: the fields below say
	 * CFA = rbp + 16, rbp saved at CFA - 16, the return address at CFA - 8 (on AArch64 the
	 * frame record of x29 and x30 x29 points at); rbp 0 ends the stack, and rbp must lie in
	 * the thread's stack (a guess is never read blindly). */
	MF_CFI_GUESS,
};
struct mf_cfi_rule {
	int32_t cfa_off; /* CFA = (cfa_rbp ? rbp : rsp) + cfa_off */
	int32_t rbp_off; /* the caller's rbp is saved at CFA + rbp_off; 0: rbp is unchanged */
	uint8_t cfa_rbp;
	uint8_t kind;
	int32_t ra_off;	   /* the return address is saved at CFA + ra_off (x86-64: always -8) */
	uint8_t ra_signed; /* AArch64: saved signed (pointer authentication); not in the word */
};

/* The return address w read from the stack as code: on AArch64 it may carry a pointer
 * authentication code in its high bits (-mbranch-protection), which xpaclri clears (a no-op
 * hint where the processor has none); x86-64 has none. The word itself, as it lies, is what
 * the hot stacks compare (mf_walk_checks). */
#if defined(__aarch64__)
#define MF_RA_SIGNED 1
static inline __attribute__((always_inline)) uintptr_t mf_ra_strip(uintptr_t w)
{
	register uintptr_t x30 __asm__("x30") = w;
	__asm__("hint 7" : "+r"(x30)); /* xpaclri */
	return x30;
}
#else
#define MF_RA_SIGNED 0
static inline uintptr_t mf_ra_strip(uintptr_t w)
{
	return w;
}
#endif

#define MF_RULE_EPOCH_BITS  21
#define MF_RULE_EPOCH_MASK  ((1u << MF_RULE_EPOCH_BITS) - 1)
#define MF_RULE_EPOCH_SHIFT 43

#if defined(__aarch64__)
/* AArch64 (every offset a multiple of 8, counted in 8-byte words): the word is kind + 1 |
 * cfa_rbp << 3 (CFA from x29) | x29 saved << 4 | ra_off / 8 << 5 (18 bits, signed: 1 MiB) |
 * cfa_off / 8 << 23 (20 bits: 8 MiB) | epoch << 43. x29 is either unchanged or saved just
 * below the return address, in the frame record the two make (rbp_off = ra_off - 8), wherever
 * that lies in the frame. A rule that does not fit makes the rule MF_CFI_UNKNOWN. */
static inline uint64_t mf_rule_pack(const struct mf_cfi_rule *r, uint64_t epoch)
{
	uint64_t kind = r->kind;
	if (kind == MF_CFI_STEP || kind == MF_CFI_GUESS) {
		int fits = r->cfa_off >= 0 && r->cfa_off < (8 << 20) && r->ra_off < 0 &&
			   r->ra_off >= -(8 << 17) && !((r->cfa_off | r->ra_off) & 7) &&
			   (r->rbp_off == 0 || r->rbp_off == r->ra_off - 8);
		if (!fits)
			kind = MF_CFI_UNKNOWN;
	}
	return (kind + 1) | (uint64_t)(r->cfa_rbp & 1) << 3 | (uint64_t)(r->rbp_off != 0) << 4 |
	       (uint64_t)((r->ra_off >> 3) & 0x3ffff) << 5 |
	       (uint64_t)((r->cfa_off >> 3) & 0xfffff) << 23 | epoch << MF_RULE_EPOCH_SHIFT;
}
static inline int32_t mf_rule_ra_off(uint64_t w)
{
	return (int32_t)((int64_t)(w << 41) >> 46 << 3);
}
static inline int32_t mf_rule_rbp_off(uint64_t w)
{
	return w & 16 ? mf_rule_ra_off(w) - 8 : 0;
}
static inline uint32_t mf_rule_cfa_off(uint64_t w)
{
	return (uint32_t)(w >> 23 & 0xfffff) << 3;
}
#else
/* x86-64: the word is kind + 1 (so never 0) | cfa_rbp << 3 | rbp_off << 4 | cfa_off << 20 |
 * epoch << 43; the return address lies at CFA - 8. A cfa_off that does not fit its 23 bits
 * makes the rule MF_CFI_UNKNOWN. */
static inline uint64_t mf_rule_pack(const struct mf_cfi_rule *r, uint64_t epoch)
{
	uint64_t kind = r->kind;
	if (r->cfa_off < 0 || r->cfa_off >= (1 << 23))
		kind = MF_CFI_UNKNOWN;
	return (kind + 1) | (uint64_t)(r->cfa_rbp & 1) << 3 | (uint64_t)(uint16_t)r->rbp_off << 4 |
	       (uint64_t)(r->cfa_off & 0x7fffff) << 20 | epoch << MF_RULE_EPOCH_SHIFT;
}
static inline int16_t mf_rule_rbp_off(uint64_t w)
{
	return (int16_t)(uint16_t)(w >> 4);
}
static inline int32_t mf_rule_ra_off(uint64_t w)
{
	(void)w;
	return -8;
}
static inline uint32_t mf_rule_cfa_off(uint64_t w)
{
	return (uint32_t)(w >> 20) & 0x7fffff;
}
#endif

static inline unsigned mf_rule_kind(uint64_t w)
{
	return (unsigned)(w & 7) - 1;
}
static inline int mf_rule_cfa_rbp(uint64_t w)
{
	return (int)(w >> 3) & 1;
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
