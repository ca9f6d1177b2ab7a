#!/bin/sh
# realloc racing other threads for its old block's address (tests/progs/prog_life_realloc.c), with
# lifetimes: glibc gives the address realloc frees to another thread's malloc at once, which
# must not find the old block still in the map; and a realloc that fails leaves its block
# where it was. Every block is charged once to its stack: none leaked, each freed block once
# in its stack's lifetime histogram, no free of an unknown block; realloc to 0, and moving.
. "$srcdir/tests/tap.sh"
N=5000 M=2 # (each round maps, moves and unmaps: 20000 took minutes on a busy machine)
for mode in zero move; do
	life_profile "$mode: prog_life_realloc $N $M $mode" "$MF_TESTS/prog_life_realloc" $N $M $mode
	is "$(calls "$mf_work/leaked" ';site_') $(sum "$(lives "$mf_work/hist" site_resized)")" "0 $N" \
		"$mode: none leaked, site_resized's $N blocks each once in its lifetime histogram"
	like "$("$MF_PRINT" $d)" "; 0 frees of blocks never seen allocated$" "$mode: no free of an unknown block"
done
is "$(sum "$(lives "$mf_work/hist" site_moved)")" $N "move: site_moved's $N blocks each once in its lifetime histogram"
done_testing
