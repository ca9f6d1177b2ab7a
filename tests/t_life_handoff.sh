#!/bin/sh
# Blocks freed by another thread at once (tests/prog_life_handoff.c), with lifetimes: the
# consumer frees each block while its producer goes on allocating and freeing, so the two
# threads meet in the address map's shards all the time. Every block is charged once to its
# stack: none leaked and no free of an unknown block, in 3 runs of 2 pairs of threads.
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
done_testing
