#!/bin/sh
# A snapshot directory named on the command line reads as --snapshot N reads it: the state the
# snapshot took, never the live files less the last reset (which may come after it). A program
# built here: 100 calls at site_a, snapshot "a", 40 calls at site_b, malloc_freq_reset (which
# takes snapshot "reset"), 30 calls at site_c, snapshot "b", 20 calls at site_d.
. "$srcdir/tests/tap.sh"
cat > "$mf_work/p.c" << 'PROG'
#include <stdlib.h>
#include "malloc_freq.h"
#pragma weak malloc_freq_snapshot
#pragma weak malloc_freq_reset
static void *volatile sink;
#define SITE(name) __attribute__((noinline)) static void name(void) { free(sink); sink = malloc(16); }
SITE(site_a) SITE(site_b) SITE(site_c) SITE(site_d)
static void repeat(void (*site)(void), int n) { for (int i = 0; i < n; i++) site(); }
int main(void)
{
	repeat(site_a, 100);
	if (malloc_freq_snapshot("a") < 0) return 1;
	repeat(site_b, 40);
	if (malloc_freq_reset() < 0) return 1;
	repeat(site_c, 30);
	if (malloc_freq_snapshot("b") < 0) return 1;
	repeat(site_d, 20);
	free(sink);
	return 0;
}
PROG
$CC -O1 -g -fno-omit-frame-pointer -fno-builtin -I"$srcdir/include" -o "$mf_work/p" "$mf_work/p.c" ||
	bail "cannot build the program"
profile_within 60 "$mf_work/p"; is "$?" 0 "the program runs under the profiler"
dir=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
snaps=$(ls "$dir" | grep '^snap\.' | tr '\n' ' ')
is "$snaps" "snap.1.a snap.2.reset snap.3.b " "three snapshots: a, the reset's, b"
# sites DIR-OR-OPTIONS...: the calls of site_a..site_d, as --collapsed counts them
sites() {
	"$MF_PRINT" --collapsed "$@" > "$mf_work/c" 2> "$mf_work/err"
	echo "$? $(for s in a b c d; do calls "$mf_work/c" ";site_$s;malloc\$"; done | tr '\n' ' ')$(cat "$mf_work/err")"
}
for n in 1 2 3; do
	name=$(ls "$dir" | grep "^snap\.$n\.")
	want=$(sites --snapshot $n "$dir")
	is "$(sites "$dir/$name")" "$want" "$name named as a directory reads as --snapshot $n: $want"
done
is "$(sites "$dir/snap.1.a")" "0 100 0 0 0 " "snap.1.a: site_a's 100 calls, exit 0, nothing said"
is "$(sites "$dir/snap.2.reset")" "0 100 40 0 0 " "snap.2.reset: the 140 calls before the reset"
is "$(sites "$dir/snap.3.b")" "0 100 40 30 0 " "snap.3.b: 170 calls, from the start as --snapshot reads it"
is "$(sites "$dir")" "0 0 0 30 20 " "the live files: since the reset"
"$MF_PRINT" "$dir/snap.1.a" > "$mf_work/out" 2> /dev/null
like "$(sed -n 2p "$mf_work/out")" "^  counts as of the snapshot snap\.1\.a$" "the summary says which snapshot it reads"
done_testing
