/* DIEs by the code they cover: each range of a DIE (DW_AT_low_pc/high_pc or DW_AT_ranges),
 * sorted once, and the smallest range holding an address found by a binary search. The
 * subprograms of a unit (inlines.c), and the units of an object without .debug_aranges:
 * clang and lld write none unless asked (-gdwarf-aranges), and elfutils 0.188 then finds no
 * unit for any address (symbolize.c). */
#ifndef MF_RANGES_H
#define MF_RANGES_H

#include <elfutils/libdw.h>

struct mf_range {
	Dwarf_Addr low, high; /* [low, high) */
	Dwarf_Die die;
};
struct mf_ranges {
	struct mf_range *v;
	size_t count, cap;
};

/* Adds the ranges of die. 0, or -1 when out of memory. */
int mf_ranges_add(struct mf_ranges *r, Dwarf_Die *die);
/* Adds the ranges of every unit of dwarf. 0, or -1 when out of memory. */
int mf_ranges_add_units(struct mf_ranges *r, Dwarf *dwarf);
/* Sorts them, after the adds and before the finds. */
void mf_ranges_sort(struct mf_ranges *r);
/* The DIE of the smallest range holding addr, or NULL. Valid while r is, and its Dwarf. */
Dwarf_Die *mf_ranges_find(struct mf_ranges *r, Dwarf_Addr addr);
void mf_ranges_free(struct mf_ranges *r);

#endif
