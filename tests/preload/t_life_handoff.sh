#!/bin/sh
# Blocks freed by another thread at once (tests/progs/prog_life_handoff.c), with lifetimes: the
# consumer frees each block while its producer goes on allocating and freeing, so the two
# threads meet in the address map's shards all the time. Every block is charged once to its
# stack: none leaked and no free of an unknown block, in 3 runs of 2 pairs of threads. Then
# with "shared", the producer frees every other block of site_handed itself, at the same time
# as its consumer frees the others: that stack's frees and its lifetime histogram count every
# block, from both threads (3 runs of 100,000 blocks: adds that are not atomic lose some).
# Last, 16 pairs at once, "shared": each consumer's first free takes its producer's table from
# it (until then the producer enters it without a lock, lib/life/bias.c) while the producer is
# busy in it: 16 such handovers a run, and every block still counted once.
. "$srcdir/tests/tap.sh"
N=20000 P=2
for run in 1 2 3; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_LIFETIMES=1 profile_within 120 "$MF_TESTS/prog_life_handoff" $N $P
	is "$?" 0 "run $run: prog_life_handoff $N $P exits 0"
	d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
	"$MF_PRINT" --collapsed $d > "$mf_work/calls"
	"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/leaked"
	is "$(calls "$mf_work/calls" ';site_handed;malloc$') $(calls "$mf_work/calls" ';site_temp;malloc$')" \
		"$((N * P)) $((N * P / 2))" "run $run: $((N * P)) blocks handed over, $((N * P / 2)) temporaries"
	is "$(calls "$mf_work/leaked" ';site_')" 0 "run $run: none of them leaked"
	like "$("$MF_PRINT" $d)" "; 0 frees of blocks never seen allocated$" "run $run: no free of an unknown block"
done
N=100000
for run in 1 2 3; do
	life_profile "shared run $run: prog_life_handoff $N $P shared" "$MF_TESTS/prog_life_handoff" $N $P shared
	is "$(calls "$mf_work/leaked" ';site_handed;') $(sum "$(lives "$mf_work/hist" site_handed)")" \
		"0 $((N * P))" "shared run $run: site_handed's blocks all freed, $((N * P)) in its lifetime histogram"
done
N=5000 P=16
for run in 1 2; do
	life_profile "$P pairs run $run: prog_life_handoff $N $P shared" "$MF_TESTS/prog_life_handoff" $N $P shared
	is "$(calls "$mf_work/leaked" ';site_') $(sum "$(lives "$mf_work/hist" site_handed)")" \
		"0 $((N * P))" "$P pairs run $run: every block freed, $((N * P)) in site_handed's lifetime histogram"
done
done_testing
