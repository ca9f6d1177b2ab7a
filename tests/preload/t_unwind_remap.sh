#!/bin/sh
# A stack whose mapping went and a smaller one came at its place (a coroutine's, freed and made
# again): a frame stepped by a guess (code without unwind tables) whose rbp points past the new
# mapping's end is not read there. The bounds of a stack other than the thread's own are not
# kept from one walk to the next (they were, and the walk faulted in the program).
. "$srcdir/tests/tap.sh"
d="$mf_work/build"
mkdir "$d" || bail "mkdir failed"
$CC -O2 -g -I"$srcdir/tests/progs" -o "$d/prog" "$srcdir/tests/progs/prog_remap.c" "$srcdir/tests/progs/nocfi_tramp.S" 2> "$d/err" ||
	skip_all "$CC cannot build prog_remap.c with nocfi_tramp.S: $(head -1 "$d/err")"
want=$(within 20 "$d/prog"); prc=$?
for mode in cached check; do
	rm -rf "$mf_work"/malloc_freq.* "$MALLOC_FREQ_CACHE"
	got=$(MALLOC_FREQ_UNWIND=$mode profile_within 20 "$d/prog" 2> "$d/stderr"); rc=$?
	is "$rc:$got" "$prc:$want" "MALLOC_FREQ_UNWIND=$mode: runs as without the profiler"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$d/c.txt" 2> /dev/null
	is "$(calls "$d/c.txt" ';site_a;malloc$'):$(calls "$d/c.txt" ';site_b;malloc$')" 1:1 \
		"... site_a's and site_b's calls recorded, one each"
done
done_testing
