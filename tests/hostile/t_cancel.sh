#!/bin/sh
# Threads cancelled asynchronously die at any instruction, inside the profiler too: nothing
# they held may stay held. 20 rounds of 4 threads cancelled while they allocate through
# changing call paths, each followed by a fork whose child records its own 10 calls. glibc's
# malloc is not async-cancel-safe: a bump allocator preloaded after the profiler serves.
. "$srcdir/tests/tap.sh"
MF_AFTER="$MF_TESTS/.libs/bumpalloc.so"
[ -f "$MF_AFTER" ] || bail "no $MF_AFTER"
want="cancel: 20 rounds, 20 children exited 0"
got=$(within 20 env LD_PRELOAD="$MF_AFTER" "$MF_TESTS/prog_cancel" 20); rc=$?
is "$rc:$got" "0:$want" "without the profiler: 20 rounds of cancelled threads, every fork's child exits 0"
got=$(profile_within 20 "$MF_TESTS/prog_cancel" 20); rc=$?
is "$rc:$got" "0:$want" "profiled: no fork waits for ever on a lock that a cancelled thread held"
children=0
for d in "$mf_work"/malloc_freq.*; do
	"$MF_PRINT" --collapsed "$d" > "$mf_work/c.txt" 2> /dev/null
	[ "$(calls "$mf_work/c.txt" ';site_child;malloc$')" = 10 ] && children=$((children + 1))
done
is "$children" 20 "... and each of the 20 children has its 10 calls in a directory of its own"
done_testing
