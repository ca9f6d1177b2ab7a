/* The DWARF scopes of an address: the subprogram whose code holds it, then each
 * inlined_subroutine nested in it that holds it, found by walking the compilation unit's DIE
 * tree ourselves. (elfutils 0.188's dwarf_getscopes finds no scope for some addresses of Rust
 * programs, which lost their inlined frames, and walks the whole unit for each address.) Each
 * unit's subprograms are indexed by address once, and the scopes (namespaces, classes,
 * functions) that functions are declared in, for names the debug info gives bare. */
#ifndef MF_INLINES_H
#define MF_INLINES_H

#include <elfutils/libdw.h>

#include "ranges.h"

struct mf_inlines;

/* Indexes for one module, of the DIEs whose ranges lie in code (which must outlive them: see
 * ranges.h); NULL when out of memory. */
struct mf_inlines *mf_inlines_new(const struct mf_code *code);
void mf_inlines_free(struct mf_inlines *x);

/* The scopes at addr (a DIE address of cudie's unit): the subprogram first, then the
 * inlined_subroutine DIEs that hold addr, outermost first. Returns their number (0: no
 * subprogram holds addr; -1: out of memory) and sets *scopes to an array valid until the next
 * call. */
int mf_inlines_find(struct mf_inlines *x, Dwarf_Die *cudie, Dwarf_Addr addr, Dwarf_Die **scopes);

/* The scopes a function's declaration decl (a DIE of cudie's unit) lies in, outermost first,
 * each followed by "::" ("ns::(anonymous namespace)::Parser::"), into buf: for a name the
 * debug info gives bare (GCC writes no linkage name for a function of internal linkage). 0;
 * -1 when decl is not one of the unit's functions, or buf is too small. */
int mf_inlines_scope(struct mf_inlines *x, Dwarf_Die *cudie, Dwarf_Die *decl, char *buf,
		     size_t size);

#endif
