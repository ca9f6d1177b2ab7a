#!/bin/sh
# Lifetimes under a seccomp filter that kills the process at a membarrier()
# (tests/progs/prog_life_seccomp.c): a consumer thread frees a producer's blocks while the
# producer goes on allocating, which without a filter takes the producer's table from it by a
# membarrier. Installed by the program (the profiler sees it coming and stops using membarrier)
# or before the profiler starts (it never does): the program is not killed, and every block is
# charged once to its stack. Without a filter, the same, as the control. (A mode whose filter the
# program cannot install or run even unprofiled, as under qemu-user, which refuses it, is
# skipped.)
. "$srcdir/tests/tap.sh"
N=20000
for mode in none now exec; do
	if [ $mode != none ]; then
		grep -q '^Seccomp:' /proc/self/status || { skip "$mode: no seccomp in this kernel"; continue; }
		"$MF_TESTS/prog_life_seccomp" $mode 10 > /dev/null 2> "$mf_work/plain.err"; prc=$?
		[ $prc = 0 ] || { skip "$mode: the program cannot run its filter here, even unprofiled (status $prc: $(head -1 "$mf_work/plain.err"))"; continue; }
	fi
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_LIFETIMES=1 profile_within 120 "$MF_TESTS/prog_life_seccomp" $mode $N > "$mf_work/out"
	is "$?" 0 "$mode: prog_life_seccomp $mode $N exits 0 (not killed by the filter)"
	like "$(cat "$mf_work/out")" "^handed $N, temporaries [0-9]+$" "$mode: it says what it did"
	d=$(ls -d "$mf_work"/malloc_freq.* | tail -1) || bail "no profile directory"
	"$MF_PRINT" --collapsed $d > "$mf_work/calls"
	"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/leaked"
	"$MF_PRINT" --histogram -t 0 $d > "$mf_work/hist"
	is "$(calls "$mf_work/calls" ';site_handed;malloc$')" $N "$mode: $N blocks handed over"
	is "$(calls "$mf_work/leaked" ';site_')" 0 "$mode: none of them leaked"
	is "$(sum "$(lives "$mf_work/hist" site_handed)")" $N "$mode: $N in site_handed's lifetime histogram"
	like "$("$MF_PRINT" $d)" "; 0 frees of blocks never seen allocated$" "$mode: no free of an unknown block"
done
done_testing
