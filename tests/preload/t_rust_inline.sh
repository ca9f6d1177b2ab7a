#!/bin/sh
# Rust built with rustc -O -g (legacy mangling, then v0): at the return address of every call
# the program's own functions make, mf_print's symbolizer gives the frames binutils' addr2line
# -i gives (functions inlined there, innermost first, each with its file and line), and the
# report shows format! in build_words at its line.
. "$srcdir/tests/tap.sh"
why=$(rust_why)
[ -z "$why" ] || skip_all "$why"
for t in addr2line objdump; do
	command -v $t > /dev/null || skip_all "$t not installed (binutils)"
done
src=$srcdir/tests/progs/prog_rust_inline.rs
# frames BINARY ADDR...: "function<TAB>file:line" per frame, a blank line after each address,
# as addr2line says (demangled names without legacy hashes or v0 crate disambiguators)
frames() {
	bin=$1; shift
	for a in "$@"; do printf '%x\n' $((0x$a - 1)); done | xargs addr2line -a -i -f -C -e "$bin" |
		awk '/^0x/ { if (n++) print ""; next }
		{ fn = $0; getline loc; sub(/:\?$/, ":0", loc); sub(/ \(discriminator [0-9]+\)$/, "", loc)
		  gsub(/\[[0-9a-f]+\]/, "", fn); sub(/::h[0-9a-f]{16}$/, "", fn); print fn "\t" loc }
		END { if (n) print "" }'
}
for mangling in legacy v0; do
	bin=$mf_work/prog_rust_inline_$mangling
	flags=
	[ $mangling = v0 ] && flags="-C symbol-mangling-version=v0"
	if ! rustc -O -g $flags -o "$bin" "$src" 2> "$mf_work/rustc.err"; then
		if [ $mangling = v0 ]; then
			skip "this rustc does not take $flags: $(head -1 "$mf_work/rustc.err")"
			continue
		fi
		sed 's/^/# /' "$mf_work/rustc.err"
		fail "rustc -O -g builds the program"
		continue
	fi
	# return addresses of the calls made in the program's own functions
	return_addresses "$bin" '<prog_rust_inline::' -C > "$mf_work/calls"
	n=$(wc -l < "$mf_work/calls")
	[ "$n" -ge 10 ]; ok $? "$mangling: $n call sites in the program's functions"
	"$MF_TESTS/sym_frames" "$bin" $(cat "$mf_work/calls") > "$mf_work/ours"
	frames "$bin" $(cat "$mf_work/calls") > "$mf_work/theirs"
	is "$(diff "$mf_work/theirs" "$mf_work/ours" | head -20)" "" "$mangling: every frame of every call site as addr2line -i gives it"
	inlined=$(awk 'NF { k++ } !NF { if (k > 1) m++; k = 0 } END { print m + 0 }' "$mf_work/ours")
	[ "$inlined" -ge 5 ]; ok $? "$mangling: $inlined of them have inlined frames"
	# (rustc builds for this machine: not for a library of another processor)
	native "$mangling: the program under the profiler" || continue
	rm -rf "$mf_work"/malloc_freq.*
	out=$(profile "$bin"); rc=$?
	is "$rc:$out" "0:1000 1000" "$mangling: runs under the profiler"
	"$MF_PRINT" --collapsed --lines "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	# (rustc 1.48 calls alloc::fmt::format there rather than inline it: then its call's line)
	like "$(cat "$mf_work/c.txt")" "prog_rust_inline::build_words prog_rust_inline.rs:10;alloc::fmt::format( \[inlined\])? fmt.rs:[0-9]+;" \
		"$mangling: format! shows in build_words at its line (inlined, or called)"
done
done_testing
