/* Names as mf_print shows them: mangled C++ and Rust (legacy and v0) symbols, demangled, then
 * simplified; the table below is the before and after. Template and generic arguments,
 * parameter lists and C++ return types go; operators, anonymous namespaces, lambdas and
 * closures stay readable; Rust trait impls keep their types. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../../mf_print/names.h"
#include "../tap.h"

/* in: as a symbol table or debug info has it (mangled, or not); want: as reports show it. */
static const struct {
	const char *in, *want;
} names[] = {
    /* C++ */
    {"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector::push_back"},
    {"_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
     "std::vector::_M_realloc_insert"},
    {"_ZNSt6vectorINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESaIS5_EE12emplace_backIJRA4_"
     "KcEEERS5_DpOT_",
     "std::vector::emplace_back"},
    {"_ZNSt10_HashtableIiSt4pairIKiiESaIS2_ENSt8__detail10_Select1stESt8equal_toIiESt4hashIiENS4_"
     "18_Mod_range_hashingENS4_20_Default_ranged_hashENS4_20_Prime_rehash_policyENS4_17_Hashtable_"
     "traitsILb0ELb0ELb1EEEE9_M_rehashEmRKm",
     "std::_Hashtable::_M_rehash"},
    {"_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()"},
    {"_Znwm", "operator new"},
    {"_ZdlPvm", "operator delete"},
    {"_ZN12_GLOBAL__N_16helperEi", "(anonymous namespace)::helper"},
    {"_ZltIiEbRK3FooIT_ES4_", "operator<"},
    {"_ZN6StreamlsEPKc", "Stream::operator<<"},
    {"_ZNK3FoocvbEv", "Foo::operator bool"},
    {"_ZN3FooclEi", "Foo::operator()"},
    {"_Z3fooB5cxx11v", "foo"},
    /* C++ names as debug info may give them, already demangled */
    {"bool operator<<int>(Foo<int> const&, Foo<int> const&)", "operator<"},
    {"plain_c_function", "plain_c_function"},
    {"broken<unbalanced(", "broken"},
    /* Rust, legacy mangling (as Debian's rustc 1.63 and its std) */
    {"_ZN60_$LT$alloc..string..String$u20$as$u20$core..clone..Clone$GT$5clone17h2161f04e680afcf3E",
     "<String as Clone>::clone"},
    {"_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$7reserve21do_reserve_and_handle17h0123456789abcdefE",
     "RawVec::reserve::do_reserve_and_handle"},
    {"_ZN1r9clone_all28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdefE",
     "r::clone_all::{{closure}}"},
    {"_ZN4core3ops8function5impls72_$LT$impl$u20$core..ops..function..FnOnce$LT$A$GT$$u20$for$u20$"
     "$RF$F$GT$9call_once17h0123456789abcdefE",
     "<impl FnOnce for &F>::call_once"},
    {"_ZN1r11build_words17ha3cb1699ef2c258eE.llvm.8687394551779140629", "r::build_words"},
    /* Rust, v0 mangling (-C symbol-mangling-version=v0; newer std) */
    {"_RNvXs4_NtCslNYArtu3iFV_5alloc6stringNtB5_6StringNtNtCsgEmfK2I1SDS_4core5clone5Clone5clone",
     "<String as Clone>::clone"},
    {"_RINvNvMs2_NtCslNYArtu3iFV_5alloc7raw_vecINtB8_11RawVecInnerpE7reserve21do_reserve_and_"
     "handleNtNtBa_5alloc6GlobalEBa_",
     "RawVecInner::reserve::do_reserve_and_handle"},
    {"_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecNtNtB7_6string6StringE8grow_"
     "oneCsjrHSEGnQ3l9_3std",
     "RawVec::grow_one"},
    {"_RNCNvCs6GmmlP4bgsG_1r9clone_all0B3_", "r::clone_all::{closure#0}"},
    {"_RNvCs6GmmlP4bgsG_1r11build_words", "r::build_words"},
    /* GCC's local copies of a C function, as a symbol table names them (debug info names
     * them as the function); a C++ one's suffix is demangled as " [clone .cold]" */
    {"f7.cold", "f7"},
    {"parse.part.0", "parse"},
    {"hash.isra.12", "hash"},
    {"copy.constprop.0", "copy"},
    {"f.constprop.0.isra.0", "f"},
    {"f.part.1.cold", "f"},
    {"f.cold.3", "f"},
    {"_Z3food.cold", "foo"},
    {"f.coldx", "f.coldx"},
    {"f.part", "f.part"},
    {"f.lto_priv.0", "f.lto_priv.0"},
};

int main(void)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		enum mf_lang lang;
		char *d = mf_name_demangle(names[i].in, &lang);
		char out[1024];
		mf_name_simplify(d ? d : names[i].in, lang, out, sizeof(out));
		if (!tap_ok(!strcmp(out, names[i].want), "%s -> %s", names[i].in, names[i].want))
			tap_diag("demangled %s, got %s", d ? d : "(not mangled)", out);
		free(d);
	}
	char small[8];
	mf_name_simplify("<alloc::string::String as core::clone::Clone>::clone", MF_LANG_RUST,
			 small, sizeof(small));
	tap_ok(strlen(small) == sizeof(small) - 1, "a short buffer is filled and terminated");
	return tap_done();
}
