/* A module's ELF symbol table sorted by address, built once: the symbol at an address by a
 * binary search. (libdwfl's dwfl_module_addrinfo searches the whole table for every address,
 * which made symbolizing a large library without debug info take seconds.) */
#ifndef MF_ELFSYM_H
#define MF_ELFSYM_H

#include <stdint.h>

#include <elfutils/libdwfl.h>

struct mf_elfsym;

/* The table of mod's symbols that can name code (those with a section, not files, sections
 * or thread-local data). NULL when it has none, or out of memory. */
struct mf_elfsym *mf_elfsym_build(Dwfl_Module *mod);
/* The name of the symbol holding addr (a module address, as dwfl_module_getsym_info gives
 * them): the one whose extent covers it, else the nearest sizeless one below it; NULL if
 * none. The name is the module's, valid as long as it is open. */
const char *mf_elfsym_find(const struct mf_elfsym *t, uint64_t addr);
void mf_elfsym_free(struct mf_elfsym *t);

#endif
