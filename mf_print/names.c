/* Function names as users read them: demangled (C++, Rust) with libiberty, and simplified
 * (template arguments and parameter lists dropped). Pure string functions. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "names.h"

/* Rust's legacy mangling is C++'s with a hash as the last name: "17h", 16 hex digits and the
 * closing "E" (then maybe a suffix such as ".llvm.1234"; names themselves hold dots too). */
static int mf_rust_legacy(const char *name)
{
	if (strncmp(name, "_ZN", 3))
		return 0;
	for (const char *h = strstr(name, "17h"); h; h = strstr(h + 1, "17h")) {
		int hex = 0;
		while (hex < 16 && isxdigit((unsigned char)h[3 + hex]))
			hex++;
		if (hex == 16 && h[19] == 'E' && (h[20] == 0 || h[20] == '.'))
			return 1;
	}
	return 0;
}

char *mf_name_demangle(const char *name, enum mf_lang *lang)
{
	if (lang)
		*lang = MF_LANG_C;
	if (!name || !*name)
		return NULL;
	const int how = DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO;
	char *d = cplus_demangle(name, how);
	/* LLVM's suffix of a name made local across units (ThinLTO), which libiberty before 2.36
	 * does not know: the name demangled without it */
	const char *llvm = d ? NULL : strstr(name, ".llvm.");
	if (llvm) {
		char *cut = strndup(name, (size_t)(llvm - name));
		d = cut ? cplus_demangle(cut, how) : NULL;
		free(cut);
	}
	if (d && lang)
		*lang =
		    !strncmp(name, "_R", 2) || mf_rust_legacy(name) ? MF_LANG_RUST : MF_LANG_CXX;
	return d;
}

/* After "operator" at in[i]: the length of the operator's symbol ("<<", "()", "[]", " new"). In
 * "operator<<int>" the last '<' opens template arguments of operator<. */
static size_t mf_operator_len(const char *in)
{
	if (!strncmp(in, "()", 2))
		return 2;
	size_t n = 0;
	while (in[n] && strchr("+-*/%^&|~!=<>,[]", in[n]))
		n++;
	if (n >= 2 && in[n - 1] == '<' && (isalnum((unsigned char)in[n]) || in[n] == '_'))
		n--;
	return n;
}

/*
 * "std::vector<int, std::allocator<int> >::push_back(int const&)" -> "std::vector::push_back":
 * template arguments, the parameter list and GCC's " [clone .cold]" go, as in pprof's
 * simplified names. Operators (operator<, operator()), "(anonymous namespace)" and lambdas
 * keep their brackets.
 */
static void mf_cxx_simplify(const char *in, char *out, size_t size)
{
	size_t o = 0, len = strlen(in);
	for (size_t i = 0; i < len && o + 1 < size; i++) {
		char c = in[i];
		if (!strncmp(in + i, "operator", 8) &&
		    (i == 0 || !isalnum((unsigned char)in[i - 1]))) {
			size_t n = 8 + mf_operator_len(in + i + 8);
			for (size_t k = 0; k < n && o + 1 < size; k++)
				out[o++] = in[i + k];
			i += n - 1;
			continue;
		}
		if ((!strncmp(in + i, "[abi:", 5) || !strncmp(in + i, " [clone ", 8)) &&
		    strchr(in + i, ']')) {
			/* an ABI tag; a copy GCC made (.constprop.0, .isra.0, .cold: the same
			 * function, as its debug info names it) */
			i = (size_t)(strchr(in + i, ']') - in);
			continue;
		}
		int keep = !strncmp(in + i, "(anonymous namespace)", 21) ||
			   (c == '(' && i >= 7 && !strncmp(in + i - 7, "{lambda", 7));
		if ((c == '<' || c == '(') && !keep) {
			int depth = 0; /* skip the balanced group */
			size_t k = i;
			for (; k < len; k++) {
				if (in[k] == '<' || in[k] == '(')
					depth++;
				else if (in[k] == '>' || in[k] == ')')
					depth--;
				if (depth == 0)
					break;
			}
			if (k >= len)
				break; /* unbalanced: keep what we have */
			i = k;
			continue;
		}
		if (keep && c == '(') {
			/* copy the kept group whole */
			size_t end =
			    strchr(in + i, ')') ? (size_t)(strchr(in + i, ')') - in) : len - 1;
			for (; i <= end && o + 1 < size; i++)
				out[o++] = in[i];
			i--;
			continue;
		}
		out[o++] = c;
	}
	/* "f() const" leaves " const" behind */
	while (o > 0 && out[o - 1] == ' ')
		o--;
	if (o >= 6 && !strncmp(out + o - 6, " const", 6))
		o -= 6;
	out[o] = 0;
}

/* Where the name starts in a simplified C++ name: after its return type, the text before the
 * last space outside brackets ("void std::vector::_M_realloc_insert"), but not the space of an
 * operator's name ("operator new", "operator bool"). */
static size_t mf_cxx_name_start(const char *s)
{
	size_t start = 0;
	int depth = 0;
	for (size_t i = 0; s[i]; i++) {
		char c = s[i];
		if (c == '(' || c == '{' || c == '[')
			depth++;
		else if ((c == ')' || c == '}' || c == ']') && depth > 0)
			depth--;
		else if (depth == 0 && !strncmp(s + i, "operator", 8) &&
			 (i == 0 || !isalnum((unsigned char)s[i - 1])))
			return start; /* spaces from here on are the operator's */
		else if (depth == 0 && c == ' ')
			start = i + 1;
	}
	return start;
}

/* ---- Rust ----------------------------------------------------------------------------------- */

struct mf_out {
	char *buf;
	size_t size, len;
};

static void mf_put(struct mf_out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && o->len + 1 < o->size; i++)
		o->buf[o->len++] = s[i];
	o->buf[o->len < o->size ? o->len : o->size - 1] = 0;
}

static void mf_puts(struct mf_out *o, const char *s)
{
	mf_put(o, s, strlen(s));
}

/* The index of the bracket closing the one at s[i] (any of <([{, counted together; the '>'
 * of "->" is not one), or len when it does not close. */
static size_t mf_close(const char *s, size_t len, size_t i)
{
	int depth = 0;
	for (; i < len; i++) {
		char c = s[i];
		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == '>' && !(i && s[i - 1] == '-')) || c == ')' || c == ']' || c == '}')
			depth--;
		if (depth == 0)
			return i;
	}
	return len;
}

/* The first place of sep in s[0..len) outside brackets, or len. */
static size_t mf_find_top(const char *s, size_t len, const char *sep)
{
	size_t n = strlen(sep);
	for (size_t i = 0; i + n <= len; i++) {
		char c = s[i];
		if (c == '<' || c == '(' || c == '[' || c == '{') {
			size_t j = mf_close(s, len, i);
			if (j >= len)
				return len;
			i = j;
			continue;
		}
		if (!strncmp(s + i, sep, n))
			return i;
	}
	return len;
}

static void mf_rust_path(struct mf_out *o, const char *s, size_t len);

static void mf_trim(const char **s, size_t *len)
{
	while (*len && **s == ' ')
		(*s)++, (*len)--;
	while (*len && (*s)[*len - 1] == ' ')
		(*len)--;
}

/* A type as a short name: a path's last name without its generic arguments ("String" for
 * "alloc::string::String"), references, pointers, slices, tuples and trait objects kept in
 * shape. */
static void mf_rust_type(struct mf_out *o, const char *s, size_t len)
{
	static const char *const sigils[] = {"&mut ", "&", "*const ", "*mut ", "dyn ", "impl "};
	mf_trim(&s, &len);
	for (size_t k = 0; k < sizeof(sigils) / sizeof(sigils[0]); k++) {
		size_t n = strlen(sigils[k]);
		if (len > n && !strncmp(s, sigils[k], n)) {
			mf_puts(o, sigils[k]);
			mf_rust_type(o, s + n, len - n);
			return;
		}
	}
	size_t plus = mf_find_top(s, len, " + ");
	if (plus < len) {
		mf_rust_type(o, s, plus);
		mf_puts(o, " + ");
		mf_rust_type(o, s + plus + 3, len - plus - 3);
		return;
	}
	if (len && (s[0] == '[' || s[0] == '(')) {
		size_t end = mf_close(s, len, 0);
		if (end >= len) {
			mf_put(o, s, len);
			return;
		}
		const char *sep = s[0] == '[' ? "; " : ", ";
		mf_put(o, s, 1);
		for (size_t at = 1; at < end;) {
			size_t n = mf_find_top(s + at, end - at, sep);
			mf_rust_type(o, s + at, n);
			at += n;
			if (at < end) {
				if (s[0] == '[') { /* the length of an array, as it is */
					mf_put(o, s + at, end - at);
					break;
				}
				mf_puts(o, sep);
				at += 2;
			}
		}
		mf_put(o, s + end, len - end);
		return;
	}
	if (!strncmp(s, "fn(", 3) || !strncmp(s, "unsafe ", 7) || !strncmp(s, "extern ", 7)) {
		mf_put(o, s, len); /* a function pointer's type, as it is */
		return;
	}
	char tmp[1024];
	struct mf_out path = {tmp, sizeof(tmp), 0};
	tmp[0] = 0;
	mf_rust_path(&path, s, len);
	if (tmp[0] == '<') { /* a qualified path names itself only whole */
		mf_puts(o, tmp);
		return;
	}
	/* The last name; a closure's with the name it is in ("main::{closure#0}"). */
	const char *last = tmp, *before = tmp;
	for (const char *p = strstr(tmp, "::"); p; p = strstr(p + 2, "::")) {
		before = last;
		last = p + 2;
	}
	mf_puts(o, last[0] == '{' ? before : last);
}

/* A qualified path's "<...>" part: "<Type as Trait>", "<impl Trait for Type>", or an inherent
 * impl's "<Type>", which is just "Type" when it is a path. */
static void mf_rust_qualified(struct mf_out *o, const char *s, size_t len)
{
	if (len > 5 && !strncmp(s, "impl ", 5)) {
		size_t f = mf_find_top(s + 5, len - 5, " for ");
		mf_puts(o, "<impl ");
		mf_rust_type(o, s + 5, f);
		if (f < len - 5) {
			mf_puts(o, " for ");
			mf_rust_type(o, s + 5 + f + 5, len - 5 - f - 5);
		}
		mf_puts(o, ">");
		return;
	}
	size_t as = mf_find_top(s, len, " as ");
	if (as < len) {
		mf_puts(o, "<");
		mf_rust_type(o, s, as);
		mf_puts(o, " as ");
		mf_rust_type(o, s + as + 4, len - as - 4);
		mf_puts(o, ">");
	} else if (len && (isalpha((unsigned char)s[0]) || s[0] == '_')) {
		mf_rust_type(o, s, len);
	} else {
		mf_puts(o, "<");
		mf_rust_type(o, s, len);
		mf_puts(o, ">");
	}
}

/*
 * A Rust path as users read it: generic arguments go ("::<T>", "Vec<T>"), a type with them
 * loses its module path ("alloc::raw_vec::RawVec<T,A>::reserve" -> "RawVec::reserve"), and
 * qualified parts keep their types and traits by their short names
 * ("<alloc::string::String as core::clone::Clone>::clone" -> "<String as Clone>::clone").
 * Closures ("{closure#0}", "{{closure}}") stay.
 */
static void mf_rust_path(struct mf_out *o, const char *s, size_t len)
{
	size_t start = o->len;
	for (size_t at = 0, first = 1; at < len; first = 0) {
		size_t n = mf_find_top(s + at, len - at, "::");
		const char *seg = s + at;
		at += n + 2;
		if (!n)
			continue;
		if (seg[0] == '<') {
			size_t end = mf_close(seg, n, 0);
			if (!first && strncmp(seg, "<impl ", 6))
				continue; /* "::<T>": generic arguments */
			o->len = start;	  /* a qualified part starts the path afresh */
			mf_rust_qualified(o, seg + 1, (end < n ? end : n) - 1);
			continue;
		}
		size_t lt = 0;
		while (lt < n && seg[lt] != '<')
			lt++;
		if (lt < n && seg[0] != '{') {
			o->len = start; /* a type with arguments: its module path goes */
			mf_put(o, seg, lt);
			continue;
		}
		if (o->len > start)
			mf_puts(o, "::");
		mf_put(o, seg, n);
	}
	if (o->len < o->size)
		o->buf[o->len] = 0;
}

/*
 * Where GCC's suffixes for the local copies it makes of a C function start, in a symbol table's
 * name ("f.cold", "f.part.0", "f.isra.0", "f.constprop.0", "f.constprop.0.isra.0"): the debug
 * info names each copy as the function. len when the name has none (a C name has no '.').
 */
static size_t mf_c_clone_start(const char *s, size_t len)
{
	static const char *const kinds[] = {".cold", ".part.", ".isra.", ".constprop."};
	const char *dot = memchr(s, '.', len);
	if (!dot || dot == s)
		return len;
	for (size_t i = (size_t)(dot - s); i < len;) {
		size_t k = 0, n = 0;
		for (; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (!strncmp(s + i, kinds[k], n = strlen(kinds[k])))
				break;
		if (k == sizeof(kinds) / sizeof(kinds[0]))
			return len;
		i += n;
		if (k == 0 && i + 1 < len && s[i] == '.' && isdigit((unsigned char)s[i + 1]))
			i++; /* an older GCC's "f.cold.3" */
		else if (k == 0)
			continue;
		size_t digits = i;
		while (i < len && isdigit((unsigned char)s[i]))
			i++;
		if (i == digits)
			return len;
	}
	return (size_t)(dot - s);
}

void mf_name_simplify(const char *in, enum mf_lang lang, char *out, size_t size)
{
	if (!size)
		return;
	out[0] = 0;
	if (lang == MF_LANG_RUST) {
		struct mf_out o = {out, size, 0};
		mf_rust_path(&o, in, strlen(in));
		return;
	}
	mf_cxx_simplify(in, out, size);
	size_t start = mf_cxx_name_start(out);
	memmove(out, out + start, strlen(out + start) + 1);
	if (lang == MF_LANG_C)
		out[mf_c_clone_start(out, strlen(out))] = 0;
}
