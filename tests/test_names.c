/* mf_print's simplified C++ names: template arguments and parameter lists go, operators,
 * anonymous namespaces and lambdas stay readable. */
#include "config.h"

#include <string.h>

#include "../mf_print/names.h"
#include "tap.h"

static void check(const char *in, const char *want)
{
	char out[512];
	mf_name_simplify(in, out, sizeof(out));
	if (!tap_ok(!strcmp(out, want), "%s -> %s", in, want))
		tap_diag("got %s", out);
}

int main(void)
{
	check("std::vector<int, std::allocator<int> >::push_back(int const&)",
	      "std::vector::push_back");
	check("std::_Hashtable<int, std::pair<int const, int> >::_M_rehash(unsigned long, unsigned "
	      "long const&)",
	      "std::_Hashtable::_M_rehash");
	check("operator new(unsigned long)", "operator new");
	check("Foo::operator()(int) const", "Foo::operator()");
	check("bool operator<<int>(Foo<int> const&, Foo<int> const&)", "bool operator<");
	check("Stream::operator<<(char const*)", "Stream::operator<<");
	check("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper");
	check("main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()");
	check("plain_c_function", "plain_c_function");
	check("broken<unbalanced(", "broken");
	return tap_done();
}
