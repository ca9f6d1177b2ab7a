#!/bin/sh
# A program that closes every descriptor, reopens its own files on the low numbers and then
# allocates from threads on fresh stack pages: its files hold exactly what it wrote (nothing
# of ours was read from, written to or closed on them) and its calls are all recorded.
. "$srcdir/tests/tap.sh"
"$MF_TESTS/prog_daemon" "$mf_work/plain"; rc=$?
is "$rc:$(cat "$mf_work/plain.result")" "0:ok" "without the profiler the program checks out"
profile "$MF_TESTS/prog_daemon" "$mf_work/prof"; rc=$?
is "$rc:$(cat "$mf_work/prof.result" 2>/dev/null)" "0:ok" "under the profiler its descriptors were left alone"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
is "$(calls "$mf_work/c.txt" ';site_daemon;malloc$')" 8000 "all 8000 calls after closing the descriptors are recorded"
done_testing
