#!/bin/sh
# A profile read on another processor than the one that recorded it, given the same binaries:
# an arm64 run read by x86-64's mf_print and an x86-64 run by arm64's (make check-arm64 runs
# this in the arm64 tree with MF_OTHER_BUILD the machine's own build and MF_OTHER_CC its
# compiler). Both readers print the same report, with names, the inlined frame and file:line.
. "$srcdir/tests/tap.sh"
[ -n "$MF_OTHER_BUILD" ] ||
	skip_all "reads another processor's profile: run by make check-arm64 (MF_OTHER_BUILD unset)"
other_lib="$MF_OTHER_BUILD/lib/.libs/libmalloc_freq.so"
other_print="$MF_OTHER_BUILD/mf_print/mf_print"
[ -f "$other_lib" ] && [ -x "$other_print" ] || bail "no library or mf_print in $MF_OTHER_BUILD"
src="$srcdir/tests/progs/prog_cross.c"
line() { grep -n "line:$1" "$src" | cut -d: -f1; }
n=3000

# record NAME CC LIB: prog_cross built by CC, run under LIB, its profile in $mf_work/NAME
record() {
	mkdir -p "$mf_work/$1"
	$2 -O2 -g -o "$mf_work/$1/prog" "$src" || bail "$2 cannot build $src"
	within 120 env MALLOC_FREQ_DIR="$mf_work/$1" LD_PRELOAD="$3" "$mf_work/$1/prog" $n
	is "$?" 0 "$1: the program exits 0 under the profiler"
}
record here "$CC" "$MF_LIB"
record other "${MF_OTHER_CC:-cc}" "$other_lib"

for run in here other; do
	dir=$(echo "$mf_work/$run"/malloc_freq.*)
	for how in --collapsed --json ""; do
		"$MF_PRINT" $how --threshold 0 --dir "$dir" > "$mf_work/$run.a" 2> "$mf_work/$run.ae"
		a=$?
		"$other_print" $how --threshold 0 --dir "$dir" > "$mf_work/$run.b" 2> "$mf_work/$run.be"
		b=$?
		is "$a $b" "0 0" "$run ${how:-(tree)}: both readers exit 0"
		cmp -s "$mf_work/$run.a" "$mf_work/$run.b"
		ok $? "$run ${how:-(tree)}: both readers print the same report"
		is "$(cat "$mf_work/$run.ae" "$mf_work/$run.be")" "" "$run ${how:-(tree)}: nothing on stderr"
	done
	# the tree, as the other processor's reader printed it: the site's calls and frames
	like "$(cat "$mf_work/$run.b")" "^ *$n .* \\|?[ \`|-]*inlined \\[inlined\\] prog_cross\\.c:$(line inlined)\$" \
		"$run: the inlined frame named, with its file:line"
	like "$(cat "$mf_work/$run.b")" "^ *$n .*site prog_cross\\.c:$(line site)\$" \
		"$run: the site named, with its file:line"
	like "$(cat "$mf_work/$run.b")" "^ *$n .*run prog_cross\\.c:$(line run)\$" \
		"$run: its caller named, with its file:line"
done
done_testing
