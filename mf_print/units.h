/* The compilation unit that holds an address, for objects without .debug_aranges: clang and
 * lld write none unless asked (-gdwarf-aranges), and elfutils 0.188 then finds no unit for
 * any address, so such a program had no file:line and no inlined frame. Each unit's code
 * ranges (DW_AT_low_pc/high_pc or DW_AT_ranges) are indexed once, sorted. */
#ifndef MF_UNITS_H
#define MF_UNITS_H

#include <elfutils/libdw.h>

struct mf_units;

/* The index of every unit of dwarf; NULL when out of memory. */
struct mf_units *mf_units_new(Dwarf *dwarf);
void mf_units_free(struct mf_units *x);

/* The unit whose code holds addr (a DIE address), or NULL. Valid while dwarf is. */
Dwarf_Die *mf_units_find(struct mf_units *x, Dwarf_Addr addr);

#endif
