#!/bin/sh
# Forks from a signal handler with lifetimes on (tests/progs/prog_life_sigfork.c): most of them
# interrupt the profiler in its address map. Every child exits 0 (none killed by a fault
# where the child's map was emptied under the interrupted call), and every child's profile
# has its K blocks at site_kept, all leaked (its lifetimes were not left switched off), while
# the parent's profile has every block of its loop freed (a child's interrupted call counts
# nothing in the parent's files), in 2 runs of 30 forks.
. "$srcdir/tests/tap.sh"
F=30 K=100
for run in 1 2; do
	rm -rf "$mf_work"/malloc_freq.*
	out=$(MALLOC_FREQ_LIFETIMES=1 profile_within 120 "$MF_TESTS/prog_life_sigfork" $F)
	is "$? $out" "0 $F children, 0 did not exit 0" "run $run: $F children forked by a signal handler exit 0"
	children=0 right=0 parent=
	for d in "$mf_work"/malloc_freq.*; do
		"$MF_PRINT" --collapsed $d > "$mf_work/calls" 2> /dev/null || continue
		if [ "$(calls "$mf_work/calls" ';site_loop;malloc$')" -gt 0 ] && [ "$(calls "$mf_work/calls" ';site_kept;')" = 0 ]; then
			"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/leaked"
			parent="$parent$(calls "$mf_work/leaked" ';site_loop;malloc$') "
		fi
		[ "$(calls "$mf_work/calls" ';site_kept;malloc$')" = $K ] || continue
		children=$((children + 1))
		"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/leaked"
		[ "$(calls "$mf_work/leaked" ';site_kept;malloc$')" = $K ] && right=$((right + 1))
	done
	is "$children $right" "$F $F" "run $run: $F children's profiles, each with $K blocks at site_kept, all leaked"
	is "$parent" "0 " "run $run: the parent's loop leaked nothing"
done
done_testing
