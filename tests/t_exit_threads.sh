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
done_testing
