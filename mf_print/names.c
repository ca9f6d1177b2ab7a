/* Function names as users read them: demangled (C++, Rust) with libiberty, and simplified
 * (template arguments and parameter lists dropped). Pure string functions. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "names.h"

char *mf_name_demangle(const char *name)
{
	if (!name || !*name)
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
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
 * template arguments and the parameter list go, as in pprof's simplified names. Operators
 * (operator<, operator()), "(anonymous namespace)" and lambdas keep their brackets.
 */
void mf_name_simplify(const char *in, char *out, size_t size)
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
