#!/bin/sh
# The program's descriptors while other threads start short threads that allocate: with one
# slot left under its RLIMIT_NOFILE, its own open() never fails because the profiler took the
# last one (and those threads' calls are still accounted for); and open() keeps returning the
# lowest free number the program expects. And the task that opens the profiler's files is gone
# when the call that made it returns: a process that waits for a child is one thread again;
# and at RLIMIT_NPROC it never takes the program's last thread or child.
. "$srcdir/tests/tap.sh"
# (qemu-user refuses the task with a table of its own, so the files open in the program's; and
# at RLIMIT_NPROC qemu fails itself, without the profiler too: qemu_thread_create, cpu_exec)
[ "$mf_arch" = "$(uname -m)" ] ||
	skip_all "qemu-user makes no task with a descriptor table of its own, and fails at RLIMIT_NPROC"
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

# RLIMIT_NPROC: the task is one of its user's tasks while it lives. Run as a user of its own (the
# kernel does not hold root to the limit), so that nothing else counts against it: a pool that
# grows until pthread_create fails gets LIMIT - 1 threads, profiled as plain, every round; and
# a fork into the last slot, after a child was waited for, never fails.
prog="$MF_TESTS/prog_nproc"
uid=$((60000 + $$ % 5000))
while getent passwd $uid > /dev/null || ps -o pid= -u $uid > /dev/null 2>&1; do uid=$((uid + 1)); done
if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null ||
	! setpriv --reuid=$uid --regid=$uid --clear-groups true 2> /dev/null; then
	for n in 1 2 3 4 5 6 7 8; do skip "RLIMIT_NPROC: needs root and setpriv, to run as a user of its own"; done
else
	chmod 755 "$mf_work"
	mkdir "$mf_work/nproc" && chown $uid "$mf_work/nproc"
	# as_user SECS CMD...: CMD as user $uid, profiled if $profiled is 1, its profile in nproc/
	as_user() {
		mf_secs=$1; shift
		rm -rf "$mf_work"/nproc/*
		if [ "$profiled" = 1 ]; then set -- env MALLOC_FREQ_DIR="$mf_work/nproc" \
			MALLOC_FREQ_CACHE="$mf_work/nproc/cache" LD_PRELOAD="$MF_LIB" "$@"; fi
		timeout -k 5 "$mf_secs" setpriv --reuid=$uid --regid=$uid --clear-groups "$@"
	}
	# a small pool, and one of 150 threads more than the system runs (most of them at first)
	tasks=$(awk '{ split($4, a, "/"); print a[2] }' /proc/loadavg)
	for limit in 32 $((tasks + 150)); do
		rounds=$((limit == 32 ? 20 : 4))
		want=$(awk -v n=$((limit - 1)) -v r=$rounds 'BEGIN { for (i = 1; i <= r; i++) printf "%s%d", (i > 1 ? " " : ""), n }')
		got=$(profiled=0 as_user 120 "$prog" threads $limit $rounds); rc=$?
		is "$rc:$got" "0:$want" "RLIMIT_NPROC $limit, plain: $((limit - 1)) threads each of $rounds rounds"
		got=$(profiled=1 as_user 120 "$prog" threads $limit $rounds); rc=$?
		is "$rc:$got" "0:$want" "... profiled: as many"
		n=$("$MF_PRINT" --collapsed "$mf_work"/nproc/malloc_freq.* 2> /dev/null | awk '/site_start;malloc /{ n += $NF } END { print n + 0 }')
		is "$n" $((rounds * (limit - 1))) "... and each thread's call is in the profile"
	done
	got=$(profiled=0 as_user 60 "$prog" forks 32 200); rc=$?
	is "$rc:$got" "0:0 of 200 forks failed" "RLIMIT_NPROC 32, one slot left, plain: no fork after a child waited for fails"
	got=$(profiled=1 as_user 60 "$prog" forks 32 200); rc=$?
	is "$rc:$got" "0:0 of 200 forks failed" "... profiled: none either (the profiler wrote each child's end)"
fi
done_testing
