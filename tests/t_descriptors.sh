#!/bin/sh
# The program's descriptors while other threads start short threads that allocate: with one
# slot left under its RLIMIT_NOFILE, its own open() never fails because the profiler took the
# last one (and those threads' calls are still accounted for); and open() keeps returning the
# lowest free number the program expects. And the task that opens the profiler's files is gone
# when the call that made it returns: a process that waits for a child is one thread again.
. "$srcdir/tests/tap.sh"
prog="$MF_TESTS/prog_fds"
for mode in emfile lowest; do
	want=$(within 30 "$prog" $mode 200 2> /dev/null); prc=$?
	rm -rf "$mf_work"/malloc_freq.*
	got=$(profile_within 30 "$prog" $mode 200 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "$prc:$want" "$mode: no open() of the program disturbed ($(sed -n "s/^$mode: //p" "$mf_work/err"))"
	n=$(accounted "$mf_work"/malloc_freq.*)
	[ "$n" -ge 400 ]; ok $? "... mf_print accounts for the 400 short threads' calls ($n calls)"
done
want=$(within 30 "$prog" alone 300 2> /dev/null); prc=$?
rm -rf "$mf_work"/malloc_freq.*
got=$(profile_within 30 "$prog" alone 300 2> "$mf_work/err"); rc=$?
is "$rc:$got" "$prc:$want" "alone: one thread again after each waited-for child ($(sed -n 's/^alone: //p' "$mf_work/err"))"
is "$("$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* 2> /dev/null | awk '/site_short;malloc /{ n += $NF } END { print n + 0 }')" 1 "... and the thread's one call is in the profile"
done_testing
