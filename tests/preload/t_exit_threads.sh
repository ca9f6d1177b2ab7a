#!/bin/sh
# A thread still running when the process calls exit() is included and finalized.
. "$srcdir/tests/tap.sh"
profile "$MF_TESTS/prog_exit_threads" 4321; rc=$?
is "$rc" 0 "prog_exit_threads exits 0 under the profiler"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"; ok $? "mf_print reads it"
is "$(calls "$mf_work/c.txt" ';site_live_worker;malloc$')" 4321 "the live worker's 4321 calls are there"
is "$(calls "$mf_work/c.txt" ';site_main;malloc$')" 4321 "main's 4321 calls are there"
report=$("$MF_PRINT" "$mf_work"/malloc_freq.*)
if printf '%s\n' "$report" | grep -q "not finalized"; then fail "both files finalized at exit"; else pass "both files finalized at exit"; fi
like "$report" "2 threads in 2 files" "two threads reported"

# exit() while another thread's file moves (tests/progs/prog_exit_grow.c, under a test build that
# takes 50 ms to finalize each file, tests/progs/libmalloc_freq_slowexit.so): the worker must not
# move its file while exit() finalizes it (exit() was killed by a fault there). 3 runs: the
# program exits 0, and every file is finalized.
for run in 1 2 3; do
	rm -rf "$mf_work"/malloc_freq.*
	MF_LIB=$MF_TESTS/.libs/libmalloc_freq_slowexit.so profile_within 60 "$MF_TESTS/prog_exit_grow" 5000
	rc=$?
	unfinished=$("$MF_PRINT" "$mf_work"/malloc_freq.* 2>&1 | grep -c "not finalized")
	is "$rc $unfinished" "0 0" "run $run: exit() while a thread's file moves: exits 0, every file finalized"
done
done_testing
