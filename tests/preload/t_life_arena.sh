#!/bin/sh
# Threads that run one after another, each in the arena the one before left
# (tests/progs/prog_life_arena.c): a thread's blocks lie in regions of the heap that an ended
# thread claimed in the lifetimes' directory, so they go into the shared map, and the blocks
# of the ended thread, left in its own table, are freed by the next thread and by main. Every
# block is charged once: none leaked, all 8 x 3000 in site_relay's lifetime histogram. (The
# process as a whole is not checked for frees of unknown blocks: about one run in six has one,
# a block of glibc's thread start, with the shared map as with a table per thread.)
. "$srcdir/tests/tap.sh"
T=8 K=3000
for run in 1 2; do
	life_profile "run $run: prog_life_arena $T $K" "$MF_TESTS/prog_life_arena" $T $K
	"$MF_PRINT" --collapsed $d > "$mf_work/calls"
	is "$(calls "$mf_work/calls" ';site_relay;malloc$')" $((T * K)) "run $run: $((T * K)) blocks at site_relay"
	is "$(calls "$mf_work/leaked" ';site_relay;')" 0 "run $run: none of them leaked"
	is "$(sum "$(lives "$mf_work/hist" site_relay)")" $((T * K)) "run $run: all $((T * K)) in site_relay's lifetime histogram"
done
done_testing
