/* Function names as users read them: demangling and simplified forms. */
#ifndef MF_NAMES_H
#define MF_NAMES_H

#include <stddef.h>

/* Demangles a C++ or Rust symbol; returns a malloc'd string, or NULL if name is not mangled. */
char *mf_name_demangle(const char *name);

/* Drops template arguments and parameter lists from a demangled C++ name into out (size
 * bytes, always terminated). */
void mf_name_simplify(const char *in, char *out, size_t size);

#endif
