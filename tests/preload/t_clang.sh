#!/bin/sh
# C built with clang -O2 -g, which writes no .debug_aranges (elfutils 0.188 then finds no unit
# for an address): at the return address of every call the program's own functions make,
# mf_print's symbolizer gives the frames binutils' addr2line -i gives, and the report shows
# the always_inline function inlined at its line.
. "$srcdir/tests/tap.sh"
command -v clang > /dev/null || skip_all "clang not installed (apt-get install clang)"
for t in addr2line objdump readelf; do
	command -v $t > /dev/null || skip_all "$t not installed (binutils)"
done
bin=$mf_work/symbolize_target
clang -O2 -g -o "$bin" "$srcdir/tests/progs/symbolize_target.c" 2> "$mf_work/clang.err"; ok $? "clang -O2 -g builds the program"
if readelf -S "$bin" | grep -q '\.debug_aranges'; then
	skip "this clang writes .debug_aranges: nothing to show"
fi
# frames ADDR...: "function<TAB>file:line" per frame, a blank line after each address, as
# addr2line -i says
frames() {
	for a in "$@"; do printf '%x\n' $((0x$a - 1)); done | xargs addr2line -a -i -f -C -e "$bin" |
		awk '/^0x/ { if (n++) print ""; next }
		{ fn = $0; getline loc; sub(/:\?$/, ":0", loc); sub(/ \(discriminator [0-9]+\)$/, "", loc)
		  print fn "\t" loc }
		END { if (n) print "" }'
}
return_addresses "$bin" '<(main|outer_alloc|plain_alloc)>:$' > "$mf_work/calls"
n=$(wc -l < "$mf_work/calls")
[ "$n" -ge 3 ]; ok $? "$n call sites in the program's functions"
"$MF_TESTS/sym_frames" "$bin" $(cat "$mf_work/calls") > "$mf_work/ours"
frames $(cat "$mf_work/calls") > "$mf_work/theirs"
sed 's/^/# addr2line: /' "$mf_work/theirs" | head -12
is "$(diff "$mf_work/theirs" "$mf_work/ours" | head -20)" "" "every frame of every call site as addr2line -i gives it"
line=$(grep -n '@mark inline_call' "$srcdir/tests/progs/symbolize_target.c" | cut -d: -f1)
# (clang builds for this machine: not for a library of another processor)
if native "the program under the profiler"; then
	profile "$bin" > /dev/null; ok $? "runs under the profiler"
	"$MF_PRINT" --collapsed --lines "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	like "$(cat "$mf_work/c.txt")" "outer_alloc symbolize_target.c:[0-9]+;inner_alloc \[inlined\] symbolize_target.c:$line;malloc " \
		"the report: inner_alloc inlined into outer_alloc, at its line"
fi
done_testing
