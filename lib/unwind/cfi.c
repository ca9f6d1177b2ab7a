/* Call frame information: for a code address, the rule that leads from its frame to its
 * caller's, read from the object's .eh_frame (found through .eh_frame_hdr with the loader's
 * lock-free lookup, mf_objects_find). Understood is what compilers emit for ordinary
 * functions: on x86-64, CFA = rsp or rbp + offset, rbp saved at an offset from the CFA or
 * untouched, the return address at CFA - 8; on AArch64, CFA = sp or x29 + offset, x29 and the
 * return address (x30) saved at offsets from the CFA (or x29 untouched), the return address
 * signed or not (DW_CFA_AARCH64_negate_ra_state: the walk clears the signature of every one).
 * Anything else (signal trampolines, stack realignment, DWARF expressions, registers saved in
 * registers, a return address not yet saved) is answered MF_CFI_UNKNOWN and left to libunwind.
 * Runs inside malloc: no allocation, no locks; reads only the loaded objects' unwind tables. */
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "unwind/internal.h"

#if defined(__aarch64__)
/* DWARF register numbers on AArch64: x29 (the frame pointer), sp, x30 (the link register);
 * the CFA is sp at the call. */
enum { MF_DW_RBP = 29, MF_DW_RSP = 31, MF_DW_RA = 30, MF_CFA_AT_CALL = 0, MF_RA_ONLY_AT = 0 };
#define MF_SAVED_OFF_MIN INT32_MIN /* (rule.h's packing says what fits) */
#else
/* DWARF register numbers on x86-64; the CFA is rsp before the call pushed the return address,
 * which lies at CFA - 8 (MF_RA_ONLY_AT; 0: anywhere below the CFA). */
enum { MF_DW_RBP = 6, MF_DW_RSP = 7, MF_DW_RA = 16, MF_CFA_AT_CALL = 8, MF_RA_ONLY_AT = -8 };
#define MF_SAVED_OFF_MIN INT16_MIN
#endif

/* Pointer encodings (DW_EH_PE_*) */
enum {
	MF_PE_ABSPTR = 0x00,
	MF_PE_ULEB128 = 0x01,
	MF_PE_UDATA2 = 0x02,
	MF_PE_UDATA4 = 0x03,
	MF_PE_UDATA8 = 0x04,
	MF_PE_SLEB128 = 0x09,
	MF_PE_SDATA2 = 0x0a,
	MF_PE_SDATA4 = 0x0b,
	MF_PE_SDATA8 = 0x0c,
	MF_PE_PCREL = 0x10,
	MF_PE_DATAREL = 0x30,
	MF_PE_INDIRECT = 0x80,
	MF_PE_OMIT = 0xff,
};

/* A bounded reader over [p, end): any read past the end sets bad. */
struct mf_rd {
	const uint8_t *p, *end;
	int bad;
};

static inline uint64_t mf_rd_fixed(struct mf_rd *r, int size)
{
	if (r->bad || r->end - r->p < size) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	memcpy(&v, r->p, (size_t)size); /* little-endian */
	r->p += size;
	return v;
}

/* One byte: the reading CFA programs does most. */
static inline uint8_t mf_rd_u8(struct mf_rd *r)
{
	if (mf_likely(r->p < r->end))
		return *r->p++;
	r->bad = 1;
	return 0;
}

static inline void mf_rd_skip(struct mf_rd *r, uint64_t n)
{
	if (r->bad || n > (uint64_t)(r->end - r->p))
		r->bad = 1;
	else
		r->p += n;
}

static inline uint64_t mf_rd_uleb(struct mf_rd *r)
{
	uint8_t first = mf_rd_u8(r);
	if (mf_likely(!(first & 0x80)))
		return first; /* nearly always: offsets and registers below 128 */
	uint64_t v = first & 0x7f;
	for (int shift = 7; shift < 64; shift += 7) {
		uint8_t b = mf_rd_u8(r);
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static inline int64_t mf_rd_sleb(struct mf_rd *r)
{
	int64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b = mf_rd_u8(r);
		v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		if (!(b & 0x80)) {
			if (shift + 7 < 64 && (b & 0x40))
				v |= -((int64_t)1 << (shift + 7));
			return v;
		}
	}
	r->bad = 1;
	return 0;
}

/* A pointer in encoding enc; datarel is relative to base (.eh_frame_hdr). */
static uintptr_t mf_rd_encoded(struct mf_rd *r, uint8_t enc, uintptr_t base)
{
	uintptr_t at = (uintptr_t)r->p;
	uint64_t v;
	switch (enc & 0x0f) {
	case MF_PE_ABSPTR:
	case MF_PE_UDATA8:
	case MF_PE_SDATA8:
		v = mf_rd_fixed(r, 8);
		break;
	case MF_PE_ULEB128:
		v = mf_rd_uleb(r);
		break;
	case MF_PE_SLEB128:
		v = (uint64_t)mf_rd_sleb(r);
		break;
	case MF_PE_UDATA2:
		v = mf_rd_fixed(r, 2);
		break;
	case MF_PE_SDATA2:
		v = (uint64_t)(int64_t)(int16_t)mf_rd_fixed(r, 2);
		break;
	case MF_PE_UDATA4:
		v = mf_rd_fixed(r, 4);
		break;
	case MF_PE_SDATA4:
		v = (uint64_t)(int64_t)(int32_t)mf_rd_fixed(r, 4);
		break;
	default:
		r->bad = 1;
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case MF_PE_PCREL:
		v += at;
		break;
	case MF_PE_DATAREL:
		v += base;
		break;
	default:
		r->bad = 1;
		return 0;
	}
	if (enc & MF_PE_INDIRECT)
		r->bad = 1; /* not used for the fields read here */
	return (uintptr_t)v;
}

/* How a register of the caller is found: unchanged, saved at CFA + off, or unknowable here. */
enum { MF_REG_SAME, MF_REG_AT_CFA, MF_REG_UNDEFINED, MF_REG_OTHER };
struct mf_reg_rule {
	uint8_t how;
	int64_t off;
};
struct mf_cfa_row {
	int cfa_reg; /* DWARF number; -1: an expression */
	int64_t cfa_off;
	struct mf_reg_rule rbp, ra, rsp;
	int ra_signed; /* AArch64: the return address is signed here */
};

struct mf_cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int has_aug_data, signal_frame;
	const uint8_t *insns, *end;
};

static int mf_parse_cie(const uint8_t *p, const uint8_t *limit, uintptr_t base, struct mf_cie *c)
{
	struct mf_rd r = {p, limit, 0};
	uint64_t len = mf_rd_fixed(&r, 4);
	if (r.bad || len == 0xffffffffu || len > (uint64_t)(limit - r.p))
		return -1;
	r.end = r.p + len;
	if (mf_rd_fixed(&r, 4) != 0) /* CIE id */
		return -1;
	uint8_t version = (uint8_t)mf_rd_fixed(&r, 1);
	const char *aug = (const char *)r.p;
	size_t aug_len = strnlen(aug, (size_t)(r.end - r.p));
	if (r.bad || (size_t)(r.end - r.p) == aug_len || (version != 1 && version != 3))
		return -1;
	r.p += aug_len + 1;
	memset(c, 0, sizeof(*c));
	c->fde_enc = MF_PE_ABSPTR;
	c->code_align = mf_rd_uleb(&r);
	c->data_align = mf_rd_sleb(&r);
	c->ra_reg = version == 1 ? mf_rd_fixed(&r, 1) : mf_rd_uleb(&r);
	if (aug[0] == 'z') {
		c->has_aug_data = 1;
		uint64_t n = mf_rd_uleb(&r);
		if (r.bad || n > (uint64_t)(r.end - r.p))
			return -1;
		struct mf_rd a = {r.p, r.p + n, 0}; /* the augmentation data */
		for (size_t i = 1; i < aug_len; i++) {
			switch (aug[i]) {
			case 'R':
				c->fde_enc = (uint8_t)mf_rd_fixed(&a, 1);
				break;
			case 'L':
				mf_rd_fixed(&a, 1);
				break;
			case 'P': {
				uint8_t enc = (uint8_t)mf_rd_fixed(&a, 1);
				mf_rd_encoded(&a, enc & 0x7f, base); /* skipped, never followed */
				break;
			}
			case 'S':
				c->signal_frame = 1;
				break;
#if defined(__aarch64__)
			case 'B': /* return addresses signed with the B key: cleared the same way */
				break;
#endif
			default:
				return -1; /* unknown augmentation: the rest cannot be parsed */
			}
		}
		if (a.bad)
			return -1;
		r.p += n;
	} else if (aug[0]) {
		return -1;
	}
	if (r.bad || c->code_align == 0)
		return -1;
	c->insns = r.p;
	c->end = r.end;
	return 0;
}

static inline void mf_rule_set(struct mf_cfa_row *row, uint64_t reg, uint8_t how, int64_t off)
{
	struct mf_reg_rule rule = {how, off};
	if (reg == MF_DW_RBP)
		row->rbp = rule;
	else if (reg == MF_DW_RA)
		row->ra = rule;
	else if (reg == MF_DW_RSP)
		row->rsp = rule;
}

static inline void mf_rule_restore(struct mf_cfa_row *row, const struct mf_cfa_row *init,
				   uint64_t reg)
{
	if (reg == MF_DW_RBP)
		row->rbp = init->rbp;
	else if (reg == MF_DW_RA)
		row->ra = init->ra;
	else if (reg == MF_DW_RSP)
		row->rsp = init->rsp;
}

enum { MF_CFI_STACK = 8 };

/* Runs the instructions in [p, end) while the location stays at or below target. init is
 * the row after the CIE's instructions (NULL while running those). 0, or -1 when they use
 * what is not understood here for the CFA itself. A rule is learned for every return address
 * a stack shows, and most of that is this loop over long programs (a function's every push,
 * pop and early return): the reader, the row and the CIE's factors stay in registers. */
static int mf_cfa_run(const uint8_t *p, const uint8_t *end, const struct mf_cie *c, uintptr_t loc,
		      uintptr_t target, uintptr_t base, struct mf_cfa_row *out,
		      const struct mf_cfa_row *init)
{
	struct mf_cfa_row stack[MF_CFI_STACK], row = *out;
	const uint64_t code_align = c->code_align;
	const int64_t data_align = c->data_align;
	int depth = 0;
	struct mf_rd r = {p, end, 0};
	while (r.p < r.end) {
		uint8_t op = *r.p++;
		uint64_t reg, delta = 0;
		int64_t off;
		/* Most of a long program: a push or pop, as advance_loc and def_cfa_offset. */
		if (mf_likely((op & 0xc0) == 0x40)) {
			loc += (op & 0x3f) * code_align;
			if (loc > target)
				break;
			continue;
		}
		if (op == 0x0e && mf_likely(r.p < r.end && !(*r.p & 0x80))) {
			row.cfa_off = *r.p++;
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: { /* set_loc (its reader apart: the loop's stays in registers) */
			struct mf_rd at = r;
			loc = mf_rd_encoded(&at, c->fde_enc, base);
			r = at;
			if (loc > target)
				goto out;
			break;
		}
		case 0x02:
			delta = mf_rd_fixed(&r, 1) * code_align;
			goto advance;
		case 0x03:
			delta = mf_rd_fixed(&r, 2) * code_align;
			goto advance;
		case 0x04:
			delta = mf_rd_fixed(&r, 4) * code_align;
			goto advance;
		case 0x05: /* offset_extended */
			reg = mf_rd_uleb(&r);
			off = (int64_t)mf_rd_uleb(&r) * data_align;
			mf_rule_set(&row, reg, MF_REG_AT_CFA, off);
			break;
		case 0x06: /* restore_extended */
			reg = mf_rd_uleb(&r);
			if (!init)
				return -1;
			mf_rule_restore(&row, init, reg);
			break;
		case 0x07: /* undefined */
			mf_rule_set(&row, mf_rd_uleb(&r), MF_REG_UNDEFINED, 0);
			break;
		case 0x08: /* same_value */
			mf_rule_set(&row, mf_rd_uleb(&r), MF_REG_SAME, 0);
			break;
		case 0x09: /* register */
			reg = mf_rd_uleb(&r);
			mf_rd_uleb(&r);
			mf_rule_set(&row, reg, MF_REG_OTHER, 0);
			break;
		case 0x0a: /* remember_state */
			if (depth == MF_CFI_STACK)
				return -1;
			stack[depth++] = row;
			break;
		case 0x0b: /* restore_state (the CFA too, as libgcc and libunwind do) */
			if (depth == 0)
				return -1;
			row = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			row.cfa_reg = (int)mf_rd_uleb(&r);
			row.cfa_off = (int64_t)mf_rd_uleb(&r);
			break;
		case 0x0d: /* def_cfa_register */
			row.cfa_reg = (int)mf_rd_uleb(&r);
			break;
		case 0x0e: /* def_cfa_offset */
			row.cfa_off = (int64_t)mf_rd_uleb(&r);
			break;
		case 0x0f: /* def_cfa_expression */
			row.cfa_reg = -1;
			mf_rd_skip(&r, mf_rd_uleb(&r));
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = mf_rd_uleb(&r);
			mf_rule_set(&row, reg, MF_REG_OTHER, 0);
			mf_rd_skip(&r, mf_rd_uleb(&r));
			break;
		case 0x11: /* offset_extended_sf */
			reg = mf_rd_uleb(&r);
			off = mf_rd_sleb(&r) * data_align;
			mf_rule_set(&row, reg, MF_REG_AT_CFA, off);
			break;
		case 0x12: /* def_cfa_sf */
			row.cfa_reg = (int)mf_rd_uleb(&r);
			row.cfa_off = mf_rd_sleb(&r) * data_align;
			break;
		case 0x13: /* def_cfa_offset_sf */
			row.cfa_off = mf_rd_sleb(&r) * data_align;
			break;
		case 0x14: /* val_offset */
			reg = mf_rd_uleb(&r);
			mf_rd_uleb(&r);
			mf_rule_set(&row, reg, MF_REG_OTHER, 0);
			break;
		case 0x15: /* val_offset_sf */
			reg = mf_rd_uleb(&r);
			mf_rd_sleb(&r);
			mf_rule_set(&row, reg, MF_REG_OTHER, 0);
			break;
#if defined(__aarch64__)
		case 0x2d: /* AARCH64_negate_ra_state: the walk clears any signature */
			row.ra_signed ^= 1;
			break;
#endif
		case 0x2e: /* GNU_args_size */
			mf_rd_uleb(&r);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = mf_rd_uleb(&r);
			off = -(int64_t)mf_rd_uleb(&r) * data_align;
			mf_rule_set(&row, reg, MF_REG_AT_CFA, off);
			break;
		default:
			if (op >> 6 == 2) { /* offset */
				off = (int64_t)mf_rd_uleb(&r) * data_align;
				mf_rule_set(&row, op & 0x3f, MF_REG_AT_CFA, off);
			} else if (op >> 6 == 3) { /* restore */
				if (!init)
					return -1;
				mf_rule_restore(&row, init, op & 0x3f);
			} else {
				return -1;
			}
		}
		if (r.bad)
			return -1;
		continue;
	advance:
		if (r.bad)
			return -1;
		loc += delta;
		if (loc > target)
			break;
	}
out:
	*out = row;
	return 0;
}

/* The FDE covering pc, by binary search in .eh_frame_hdr's table, into *fde: 0; MF_CFI_NONE
 * if the table has none for pc; -1 if the table is not one read here. */
static int mf_find_fde(const uint8_t *hdr, const uint8_t *limit, uintptr_t pc, const uint8_t **fde)
{
	if (limit - hdr < 4 + 16)
		return -1;
	if (hdr[0] != 1 || hdr[3] != (MF_PE_DATAREL | MF_PE_SDATA4) || hdr[2] == MF_PE_OMIT)
		return -1;
	struct mf_rd r = {hdr + 4, hdr + 4 + 16, 0}; /* two encoded words at most */
	mf_rd_encoded(&r, hdr[1], (uintptr_t)hdr);
	uint64_t count = mf_rd_encoded(&r, hdr[2], (uintptr_t)hdr);
	if (r.bad || count > (uint64_t)(limit - r.p) / 8)
		return -1;
	if (count == 0)
		return MF_CFI_NONE;
	const int32_t *table = (const int32_t *)(const void *)r.p;
	uint64_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + (intptr_t)table[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if ((uintptr_t)hdr + (intptr_t)table[2 * lo] > pc)
		return MF_CFI_NONE;
	*fde = hdr + (intptr_t)table[2 * lo + 1];
	return 0;
}

int mf_cfi_find(uintptr_t pc, struct mf_cfi_rule *out)
{
	*out = (struct mf_cfi_rule){.kind = MF_CFI_UNKNOWN};
	struct mf_object obj;
	int at = mf_objects_find(pc, &obj);
	if (at < 0)
		return -1; /* (the table cannot be read now: libunwind's) */
	if (at > 0 || !obj.eh_frame)
		return MF_CFI_NONE;
	/* The object's ends bound every read: its unwind tables lie inside its mapping. (The
	 * loader may give a main program's ends as those of its code alone, and the tables lie
	 * beyond them: then the module map's, of all its segments.) */
	const uint8_t *hdr = (const uint8_t *)obj.eh_frame, *limit = (const uint8_t *)obj.end;
	if (hdr < (const uint8_t *)obj.start || hdr >= limit) {
		uintptr_t start, end;
		if (mf_modules_range(pc, &start, &end) || (uintptr_t)hdr < start ||
		    (uintptr_t)hdr >= end)
			return -1;
		obj.start = start;
		limit = (const uint8_t *)end;
	}
	const uint8_t *fde;
	int found = mf_find_fde(hdr, limit, pc, &fde);
	if (found)
		return found;
	if (fde < (const uint8_t *)obj.start || fde + 8 > limit)
		return -1;
	struct mf_rd r = {fde, limit, 0};
	uint64_t len = mf_rd_fixed(&r, 4);
	if (len == 0 || len == 0xffffffffu || len > (uint64_t)(limit - r.p))
		return -1;
	r.end = r.p + len;
	const uint8_t *id_at = r.p;
	uint64_t cie_off = mf_rd_fixed(&r, 4);
	if (cie_off == 0 || cie_off > (uint64_t)(id_at - (const uint8_t *)obj.start))
		return -1;
	struct mf_cie c;
	if (mf_parse_cie(id_at - cie_off, limit, (uintptr_t)hdr, &c) || c.signal_frame ||
	    c.ra_reg != MF_DW_RA)
		return -1;
	uintptr_t start = mf_rd_encoded(&r, c.fde_enc, (uintptr_t)hdr);
	uintptr_t range = mf_rd_encoded(&r, c.fde_enc & 0x0f, (uintptr_t)hdr);
	if (c.has_aug_data)
		mf_rd_skip(&r, mf_rd_uleb(&r));
	if (r.bad)
		return -1;
	if (pc < start || pc - start >= range)
		return MF_CFI_NONE; /* between two functions' entries: none covers it */
	struct mf_cfa_row init = {.cfa_reg = MF_DW_RSP, .cfa_off = MF_CFA_AT_CALL}, row;
	if (mf_cfa_run(c.insns, c.end, &c, start, start, (uintptr_t)hdr, &init, NULL))
		return -1;
	row = init;
	if (mf_cfa_run(r.p, r.end, &c, start, pc, (uintptr_t)hdr, &row, &init))
		return -1;
	if (row.ra.how == MF_REG_UNDEFINED) {
		out->kind = MF_CFI_END; /* the outermost frame (_start, a thread's start) */
		return 0;
	}
	/* A return address still in its register (AArch64's x30, before the prologue saves it:
	 * a first frame, or one a signal interrupted): no walk from the stack reads it, and
	 * libunwind, started from sp and x29 alone, would not either: libunwind's stack. (x86-64
	 * has no such register: there the rule is of no kind understood here.) */
#if defined(__aarch64__)
	if (row.ra.how == MF_REG_SAME)
		return 0;
#endif
	if ((row.cfa_reg != MF_DW_RSP && row.cfa_reg != MF_DW_RBP) || row.cfa_off <= 0 ||
	    row.cfa_off > INT32_MAX || row.ra.how != MF_REG_AT_CFA || row.ra.off >= 0 ||
	    row.ra.off < MF_SAVED_OFF_MIN || (MF_RA_ONLY_AT != 0 && row.ra.off != MF_RA_ONLY_AT) ||
	    row.rsp.how != MF_REG_SAME)
		return -1;
	if (row.rbp.how == MF_REG_AT_CFA && row.rbp.off < 0 && row.rbp.off >= MF_SAVED_OFF_MIN)
		out->rbp_off = (int32_t)row.rbp.off;
	else if (row.rbp.how == MF_REG_SAME)
		out->rbp_off = 0;
	else
		return -1;
	out->cfa_rbp = row.cfa_reg == MF_DW_RBP;
	out->cfa_off = (int32_t)row.cfa_off;
	out->ra_off = (int32_t)row.ra.off;
	out->ra_signed = (uint8_t)row.ra_signed;
	out->kind = MF_CFI_STEP;
	return 0;
}
