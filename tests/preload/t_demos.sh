#!/bin/sh
# The Rust and Python demos under the launcher, with the counts README tells users to look
# for. Rust's are known by construction: each round, a Vec<u64> of 20000 grown from empty is
# allocated once and reallocated 13 times (capacity 4, 8 ... 32768), a String of 340000 bytes
# once and 16 times (8 ... 524288); with_capacity allocates once each. Python's: CPython
# grows the string of `out +=` with realloc, once per line (from 3.11; before, every + on a
# temporary string too), and hides small objects from malloc unless PYTHONMALLOC=malloc.
. "$srcdir/tests/tap.sh"
# (rustc's program and python3 are this machine's: they cannot take another processor's library)
[ "$mf_arch" = "$(uname -m)" ] ||
	skip_all "the demos' programs (rustc's, python3) are $(uname -m)'s, the library $mf_arch's"
launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
# site DIR FUNCTION: the calls (or, with --bytes first, bytes) of stacks through FUNCTION
site() { "$MF_PRINT" --collapsed $3 "$1" > "$mf_work/c.txt" 2> /dev/null; calls "$mf_work/c.txt" "$2"; }
why=$(rust_why)
if [ -z "$why" ]; then
	rustc -C opt-level=2 -g -o "$mf_work/rust_demo" "$srcdir/demos/rust_demo.rs" 2> "$mf_work/rustc.err"
	ok $? "rustc builds demos/rust_demo.rs"
	"$launcher" -q -o "$mf_work/rust" "$mf_work/rust_demo" > /dev/null; ok $? "rust_demo runs under the launcher"
	is "$(site "$mf_work/rust" ';rust_demo::collect_growing;')" 700 "Vec grown from empty: 50 rounds x 14 calls"
	is "$(site "$mf_work/rust" ';rust_demo::collect_with_capacity;')" 50 "Vec::with_capacity: 50 rounds x 1 call"
	is "$(site "$mf_work/rust" ';rust_demo::format_growing;')" 850 "String grown from empty: 50 rounds x 17 calls"
	is "$(site "$mf_work/rust" ';rust_demo::format_with_capacity;')" 50 "String::with_capacity: 50 rounds x 1 call"
	is "$(site "$mf_work/rust" ';rust_demo::format_with_capacity;' --bytes)" 17000000 "String::with_capacity: 50 x 340000 bytes"
else
	skip "the Rust demo: $why"
fi
py=$(command -v python3)
if [ -n "$py" ]; then
	PYTHONMALLOC=malloc "$launcher" -q -o "$mf_work/py" "$py" "$srcdir/demos/python_demo.py" > "$mf_work/py.out"
	ok $? "python_demo runs under the launcher with PYTHONMALLOC=malloc"
	like "$(cat "$mf_work/py.out")" "^python_demo: 5003 distinct words, a report of 48920 bytes$" "and prints what it does without the profiler"
	# (20 rounds x 5003 lines; a few appends find room where the string lies)
	if "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
		appends=$(site "$mf_work/py" ';PyUnicode_Append;([^;]*;)*realloc$')
		[ "$appends" -ge 90000 ] && [ "$appends" -le 100060 ]
		ok $? "realloc under PyUnicode_Append: one per line of the += report ($appends of 100060)"
	else
		# Before 3.11 the eval loop resizes in place every string + whose left string is a
		# temporary (unicode_concatenate): 3 a line of the += report (str(n)'s, "\n"'s,
		# +='s), 2 of the join report's; and an LTO build (Debian 11's python3.9) inlines
		# PyUnicode_Append there, without a frame of its own. Counted by the frame that
		# follows the last eval loop's, whatever its name: the largest such total.
		"$MF_PRINT" --collapsed "$mf_work/py" 2> /dev/null |
			awk '/;realloc [0-9]+$/ { n = $NF; k = split($0, f, ";"); at = ""
				for (i = 1; i < k; i++) if (f[i] == "_PyEval_EvalFrameDefault") at = f[i + 1]
				if (at != "") s[at] += n }
				END { for (a in s) if (s[a] > m) m = s[a]; printf "%d\n", m }' > "$mf_work/inplace"
		inplace=$(cat "$mf_work/inplace")
		[ "$inplace" -ge 450000 ] && [ "$inplace" -le 500300 ]
		ok $? "python3 before 3.11: realloc from the eval loop's in-place concatenation, 5 a line of both reports ($inplace of 500300)"
	fi
	all=$("$MF_PRINT" "$mf_work/py" 2> /dev/null | sed -n '1s/^malloc_freq: \([0-9]*\) calls.*/\1/p')
	PYTHONMALLOC=pymalloc "$launcher" -q -o "$mf_work/pym" "$py" "$srcdir/demos/python_demo.py" > /dev/null
	small=$("$MF_PRINT" "$mf_work/pym" 2> /dev/null | sed -n '1s/^malloc_freq: \([0-9]*\) calls.*/\1/p')
	[ "$small" -lt $((all / 5)) ]; ok $? "without PYTHONMALLOC=malloc, pymalloc hides most calls ($small of $all)"
else
	echo "# python3 is not installed: the Python demo is not checked"
fi
[ "$mf_n" -gt 0 ] || skip_all "neither rustc nor python3 is installed"
done_testing
