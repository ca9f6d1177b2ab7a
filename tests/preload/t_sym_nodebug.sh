#!/bin/sh
# Code without debug info is named by the symbol table, with no file:line, never after the
# debug info of other code: of a function the linker discarded (--gc-sections leaves its
# DIEs and line rows at address 0, claiming [0, size), over the code that is kept), or of the
# function before it (g++ -O2 -g ends main's line table with a row at main's end, the address
# of _start, which follows it).
. "$srcdir/tests/tap.sh"
command -v gcc > /dev/null || skip_all "gcc not installed"
command -v objdump > /dev/null || skip_all "objdump not installed (binutils)"

# after BINARY FUNCTION: the return addresses of FUNCTION's calls (hex), one a line
after() { return_addresses "$1" "<$2>:\$"; }
# frame BINARY FUNCTION: "function<TAB>file:line" of the outermost frame at FUNCTION's first call
frame() { "$MF_TESTS/sym_frames" "$1" $(after "$1" "$2" | head -1) | sed '/^$/d' | tail -1; }

cd "$mf_work" || bail "no work directory"
# big.c: a function nobody calls, bigger than all the code kept
awk 'BEGIN { print "#include <stdlib.h>\nvolatile long v[64];\nvoid *volatile sinkb;\nvoid unused_big(void)\n{";
	for (i = 0; i < 1500; i++) printf "\tv[%d] += v[%d] * %d;\n", i % 64, (i * 7) % 64, i;
	print "\tsinkb = malloc(1);\n}" }' > big.c
cat > nodbg.c << 'EOF'
#include <stdlib.h>
extern void *volatile sink;
__attribute__((noinline)) void nodbg_alloc(int n) { for (int i = 0; i < n; i++) sink = malloc(20); }
EOF
cat > main.c << 'EOF'
#include <stdlib.h>
void *volatile sink;
void nodbg_alloc(int);
__attribute__((noinline)) void used_alloc(int n) { for (int i = 0; i < n; i++) sink = malloc(8); }
int main(void) { used_alloc(9); nodbg_alloc(5); return 0; }
EOF

# gc CC LINKFLAGS...: nodbg.c without -g, the others with, unused_big discarded at the link
gc() {
	cc=$1; shift
	label="$cc${*:+ $*}"
	rm -rf gc malloc_freq.*
	if ! { $cc -O1 -ffunction-sections -c nodbg.c -o nodbg.o &&
		$cc -O1 -g -ffunction-sections -c big.c -o big.o &&
		$cc -O1 -g -ffunction-sections -c main.c -o main.o &&
		$cc "$@" -Wl,--gc-sections -o gc nodbg.o big.o main.o; } 2> build.err; then
		fail "$label: builds"; sed 's/^/# /' build.err | head -5; return
	fi
	is "$(frame gc nodbg_alloc)" "nodbg_alloc	??:0" "$label: a function without debug info: its name, no line"
	is "$(frame gc _start)" "_start	??:0" "$label: _start: its name, no line"
	like "$(frame gc used_alloc)" "^used_alloc	.*main\.c:4$" "$label: a function with debug info keeps its line"
	# (the compilers build for this machine: not for a library of another processor)
	native "$label: the program under the profiler" || return
	profile ./gc; ok $? "$label: runs under the profiler"
	"$MF_PRINT" --collapsed malloc_freq.* > c.txt 2> /dev/null
	is "$(calls c.txt '^_start;.*;main;nodbg_alloc;malloc$'):$(calls c.txt '^_start;.*;main;used_alloc;malloc$')" \
		"5:9" "$label: the report: 5 calls through nodbg_alloc, 9 through used_alloc"
	is "$(grep -c unused_big c.txt)" 0 "$label: the discarded function names nothing"
}
gc gcc
if command -v clang > /dev/null && command -v ld.lld > /dev/null; then
	gc clang -fuse-ld=lld
else
	skip "no clang and lld for the same with lld"
fi

# GCC moves a function's cold part to a symbol of its own (f7.cold), and copies it (.part.N,
# .isra.N, .constprop.N): the report names each as the function, with debug info and without
cat > cold.c << 'EOF'
#include <stdio.h>
#include <stdlib.h>
void *volatile sink;
__attribute__((cold, noinline)) void report(int c) { fprintf(stderr, "rare %d\n", c); }
__attribute__((noinline)) void f7(int c)
{
	sink = malloc(8);
	if (c > 5) {
		report(c);
		for (int i = 0; i < 7; i++)
			sink = malloc(32);
	}
	sink = malloc(8);
}
int main(int argc, char **argv)
{
	(void)argv;
	f7(argc);
	f7(argc + 8);
	return 0;
}
EOF
for g in -g ""; do
	rm -rf malloc_freq.*
	native "gcc -O2${g:+ $g}: f7 and f7.cold under the profiler" || continue
	if ! gcc -O2 $g -o cold cold.c 2> build.err; then
		fail "gcc -O2 $g builds cold.c"
		continue
	fi
	profile ./cold 2> /dev/null
	"$MF_PRINT" --collapsed malloc_freq.* > c.txt 2> /dev/null
	is "$(calls c.txt ';main;f7;malloc$'):$(grep -c '[.]cold' c.txt)" "11:0" \
		"gcc -O2${g:+ $g}: f7 and f7.cold are one function: 11 calls"
done

# g++ -O2 -g: the row at main's end address is not _start's line (this machine's g++: the
# program is read, not run, with this machine's objdump)
if command -v g++ > /dev/null; then
	cat > start.cc << 'EOF'
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>
void *volatile sink;
template <typename T, int N> __attribute__((noinline)) void tpl(T x)
{
	for (int i = 0; i < N; i++)
		sink = malloc(sizeof(T) * (size_t)x);
}
struct Widget {
	std::vector<int> v;
	__attribute__((noinline)) void grow(int n)
	{
		for (int i = 0; i < n; i++)
			v.push_back(i);
	}
};
__attribute__((noinline)) std::string mkstr(int n) { return std::string((size_t)n, 'x'); }
int main()
{
	tpl<int, 3>(4);
	std::function<void(int)> fn = [](int n) { sink = new char[n]; };
	fn(9);
	Widget w;
	w.grow(100);
	for (int i = 0; i < 4; i++) {
		std::string s = mkstr(100 + i);
		sink = (void *)s.data();
	}
	auto sp = std::make_shared<std::vector<long>>(10);
	return 0;
}
EOF
	if g++ -O2 -g -o start start.cc 2> build.err; then
		is "$(frame start _start)" "_start	??:0" "g++ -O2 -g: _start: its name, no line"
	else
		fail "g++ -O2 -g builds start.cc"
	fi
else
	skip "no g++"
fi
done_testing
