/* DIEs by the code they cover: each range of a DIE (DW_AT_low_pc/high_pc or DW_AT_ranges),
 * sorted once, and the smallest range holding an address found by a binary search. The
 * subprograms of a unit (inlines.c), and the units of an object without .debug_aranges:
 * clang and lld write none unless asked (-gdwarf-aranges), and elfutils 0.188 then finds no
 * unit for any address (symbolize.c). Only ranges that lie in the module's code are taken. */
#ifndef MF_RANGES_H
#define MF_RANGES_H

#include <elfutils/libdw.h>

/*
 * A module's code, as spans of DWARF addresses (its executable sections). The linker leaves
 * the debug info of code it discarded (--gc-sections, a duplicate COMDAT) at address 0 (or 1,
 * in .debug_ranges), where it claims [0, size): the code really there when the function was
 * big. A range is taken only when it lies inside one span.
 */
struct mf_code {
	struct mf_span {
		Dwarf_Addr low, high; /* [low, high) */
	} * v;
	size_t count, cap;
};

/* 1 when [low, high) is code: not empty, not at 0, inside one span of code (when it has none,
 * any span not at 0). code may be NULL. */
int mf_code_holds(const struct mf_code *code, Dwarf_Addr low, Dwarf_Addr high);
/* 1 when a range of die that lies in code holds addr, and then *low (may be NULL) is where
 * that range starts; else 0. */
int mf_ranges_holds(Dwarf_Die *die, Dwarf_Addr addr, const struct mf_code *code, Dwarf_Addr *low);

struct mf_range {
	Dwarf_Addr low, high; /* [low, high) */
	Dwarf_Die die;
};
struct mf_ranges {
	struct mf_range *v;
	size_t count, cap;
};

/* Adds the ranges of die that lie in code. 0, or -1 when out of memory. */
int mf_ranges_add(struct mf_ranges *r, Dwarf_Die *die, const struct mf_code *code);
/* Adds the ranges in code of every unit of dwarf. 0, or -1 when out of memory. */
int mf_ranges_add_units(struct mf_ranges *r, Dwarf *dwarf, const struct mf_code *code);
/* Sorts them, after the adds and before the finds. */
void mf_ranges_sort(struct mf_ranges *r);
/* The smallest range holding addr, or NULL. Valid while r is, and its Dwarf. */
struct mf_range *mf_ranges_find(struct mf_ranges *r, Dwarf_Addr addr);
void mf_ranges_free(struct mf_ranges *r);

#endif
