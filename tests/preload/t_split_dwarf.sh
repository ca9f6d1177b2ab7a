#!/bin/sh
# A program built with -gsplit-dwarf: its functions, lines and inlined frames are read from
# the split units (a .dwo beside it) as from plain -g: every frame at every call site is the
# one the same program built with -g gives (gcc with DWARF 5 and 4, clang). Where the split
# units cannot be read (a .dwp that this elfutils does not read, a .dwo that is gone), one
# warning names the module, and its frames keep what is sure: the function, no line (the line
# table cannot tell an inlined function's lines from its caller's).
. "$srcdir/tests/tap.sh"
command -v objdump > /dev/null || skip_all "objdump not installed (binutils)"
command -v gcc > /dev/null || skip_all "gcc not installed"

src=$srcdir/tests/progs/symbolize_target.c
cd "$mf_work" || bail "no work directory"
# frames BINARY: the frames at the return address of each call of the program's own functions,
# as sym_frames prints them
frames() {
	"$MF_TESTS/sym_frames" "$1" $(return_addresses "$1" '<(main|outer_alloc|plain_alloc)>:$')
}
# outer FRAMES: each call site's outermost function, with no line
outer() { awk 'BEGIN { RS = ""; FS = "\n" } { split($NF, f, "\t"); print f[1] "\t??:0\n" }'; }
line=$(grep -n '@mark inline_call' "$src" | cut -d: -f1)

# split NAME CC FLAGS...: the program built with FLAGS, and with FLAGS -gsplit-dwarf in NAME/
split() {
	name=$1 cc=$2; shift 2
	mkdir -p "$name" && cd "$name" || bail "cannot make $name"
	if ! { $cc "$@" -o plain "$src" && $cc "$@" -gsplit-dwarf -o split "$src"; } 2> build.err; then
		fail "$name: builds"; sed 's/^/# /' build.err | head -5; cd ..; return 1
	fi
	frames plain > plain.txt
	frames split > split.txt
	like "$(cat plain.txt)" "inner_alloc	.*symbolize_target.c:$line" "$name: plain -g: inner_alloc inlined, at its line"
}
# same NAME: the split build's frames are the plain build's
same() {
	is "$(cat split.txt)" "$(cat plain.txt)" "$1: every frame as with plain -g (inlined ones too)"
	# (the compilers build for this machine: not for a library of another processor)
	native "$1: the program under the profiler" || return
	rm -rf "$mf_work"/malloc_freq.*
	profile ./split > /dev/null; ok $? "$1: runs under the profiler"
	"$MF_PRINT" --collapsed --lines "$mf_work"/malloc_freq.* > c.txt 2> err.txt
	like "$(cat c.txt)" "outer_alloc symbolize_target.c:[0-9]+;inner_alloc \[inlined\] symbolize_target.c:$line;malloc 1$" \
		"$1: the report: inner_alloc inlined into outer_alloc"
	is "$(grep -c 'warning' err.txt)" 0 "$1: no warning"
}
# unsure NAME WHAT: the split units cannot be read: the functions without lines, and a warning
unsure() {
	got=$(frames split)
	if [ "$got" = "$(cat plain.txt)" ]; then
		pass "$1: this elfutils reads $2: every frame as with plain -g"
		return
	fi
	is "$got" "$(outer < plain.txt)" "$1: $2 unread: each function without a line"
	native "$1: the program under the profiler" || return
	rm -rf "$mf_work"/malloc_freq.*
	profile ./split > /dev/null
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > c.txt 2> err.txt
	is "$(grep -c 'warning: .*/split: .*split' err.txt)" 1 "$1: one warning names the module"
	sed 's/^/# /' err.txt
}

if split gcc gcc -O2 -g; then
	same gcc
	if command -v llvm-dwp > /dev/null && llvm-dwp -e split -o split.dwp 2> dwp.err; then
		mkdir dwo && mv ./*.dwo dwo/
		unsure "gcc, a .dwp (llvm-dwp)" "a .dwp"
		rm split.dwp
	else
		skip "no llvm-dwp to make a DWARF 5 .dwp"
	fi
	rm -rf dwo ./*.dwo
	unsure "gcc, the .dwo deleted" "a .dwo"
	cd ..
fi
if split gcc4 gcc -O2 -gdwarf-4; then
	same "gcc -gdwarf-4"
	cd ..
fi
if command -v dwp > /dev/null; then
	if split gcc4_dwp gcc -O2 -gdwarf-4; then
		if dwp -e split -o split.dwp 2> dwp.err; then
			rm ./*.dwo
			unsure "gcc -gdwarf-4, a .dwp" "a .dwp"
		else
			fail "dwp makes split.dwp"
		fi
		cd ..
	fi
else
	skip "no dwp (binutils-gold) to make a .dwp"
fi
if command -v clang > /dev/null; then
	if split clang clang -O2 -g; then
		same clang
		cd ..
	fi
else
	skip "no clang"
fi
done_testing
