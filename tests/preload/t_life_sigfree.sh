#!/bin/sh
# Frees made by a signal handler with lifetimes on (tests/progs/prog_life_sigfree.c): most of them
# interrupt the profiler, in its address map (the free is taken out as the thread leaves
# it) or recording a call. Each of the K blocks is charged once: none leaked, each once in
# its stack's lifetime histogram, no free of an unknown block, in 3 runs.
. "$srcdir/tests/tap.sh"
K=427
for run in 1 2 3; do
	life_profile "run $run: prog_life_sigfree" "$MF_TESTS/prog_life_sigfree"
	is "$(calls "$mf_work/leaked" ';site_pool;malloc$') $(sum "$(lives "$mf_work/hist" site_pool)")" "0 $K" \
		"run $run: site_pool's $K blocks freed by the handler, none leaked, each once in its lifetime histogram"
	like "$("$MF_PRINT" $d)" "; 0 frees of blocks never seen allocated$" "run $run: no free of an unknown block"
done
done_testing
