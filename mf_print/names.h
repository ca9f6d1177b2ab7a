/* Function names as users read them: demangling and simplified forms. */
#ifndef MF_NAMES_H
#define MF_NAMES_H

#include <stddef.h>

/* The language a name was mangled for, which decides how it is simplified. */
enum mf_lang {
	MF_LANG_C,    /* not mangled (C, or a name from debug info) */
	MF_LANG_CXX,  /* Itanium C++ mangling */
	MF_LANG_RUST, /* Rust's legacy or v0 mangling */
};

/* Demangles a C++ or Rust symbol; returns a malloc'd string, or NULL if name is not mangled.
 * *lang (may be NULL) says which it was. */
char *mf_name_demangle(const char *name, enum mf_lang *lang);

/* A demangled name as reports show it, into out (size bytes, always terminated).
 * C++ (and names of unknown language): template arguments, parameter lists, ABI tags and the
 * return type go: "void std::vector<int>::_M_realloc_insert<int const&>(...)" ->
 * "std::vector::_M_realloc_insert"; operators, "(anonymous namespace)" and lambdas stay.
 * Rust: generic arguments go, a generic type loses its module path, qualified parts keep their
 * types: "<alloc::string::String as core::clone::Clone>::clone" -> "<String as Clone>::clone",
 * "<alloc::raw_vec::RawVec<u8>>::reserve" -> "RawVec::reserve".
 * C: GCC's suffixes of a function's local copies go ("f.cold", "f.isra.0" -> "f"), as the
 * debug info names them. */
void mf_name_simplify(const char *in, enum mf_lang lang, char *out, size_t size);

#endif
