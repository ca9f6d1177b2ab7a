#!/bin/sh
# The lifetimes map with blocks laid out as its placement finds hardest
# (tests/progs/prog_life_layout.c): page-aligned blocks (all at one place of their pages), blocks
# glibc maps (one a region), small blocks side by side, in 2 threads; every other block freed,
# the last first. Each site's blocks, leaked blocks and leaked bytes are exact, and no free is
# of a block the map lost.
. "$srcdir/tests/tap.sh"
N=6001 B=201 T=2
MALLOC_FREQ_LIFETIMES=1 profile_within 120 "$MF_TESTS/prog_life_layout" $N $B $T
is "$?" 0 "prog_life_layout $N $B $T exits 0"
d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
"$MF_PRINT" --collapsed $d > "$mf_work/calls"
"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/lb"
"$MF_PRINT" --collapsed --weight leaked $d > "$mf_work/lbytes"
n2=$(((N + 1) / 2)) b2=$(((B + 1) / 2))
for s in "site_pages;posix_memalign $N $n2 $((64 * n2))" "site_big;malloc $B $b2 $((262144 * b2))" \
	"site_side;malloc $N $n2 $((24 * n2))"; do
	set -- $s
	is "$(calls "$mf_work/calls" ";$1\$") $(calls "$mf_work/lb" ";$1\$") $(calls "$mf_work/lbytes" ";$1\$")" \
		"$(($2 * T)) $(($3 * T)) $(($4 * T))" "$1: $(($2 * T)) blocks, $(($3 * T)) of them leaked, $(($4 * T)) bytes"
done
unknown=$("$MF_PRINT" $d | sed -n 's/.*; \([0-9]*\) frees\{0,1\} of \(a \)\{0,1\}blocks\{0,1\} never seen allocated$/\1/p')
# (the loader frees at most one block of its own per thread start: see t_life.sh)
[ "${unknown:-0}" -le $((T + 1)) ]; ok $? "frees of unknown blocks: ${unknown:-0} (none by construction)"
done_testing
