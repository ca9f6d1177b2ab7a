#!/bin/sh
# Allocations inside a program's dl_iterate_phdr callbacks (the loader's lock is held there):
# recorded with their stacks like any other, never counted as a signal handler's, and a
# callback left by longjmp (the lock stays held) or by a C++ throw (glibc releases it) leaves
# the thread recording every later call with its stack, whichever way stacks are taken. The
# program runs as without the profiler; check mode finds the stacks of a thread that let go of
# the lock libunwind's.
. "$srcdir/tests/tap.sh"
n=300
# unattributed: the report says no call was a signal handler's (counted without a stack)
unattributed() {
	if "$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null | grep -q 'signal handler'; then
		fail "... none counted as a signal handler's"
	else
		pass "... none counted as a signal handler's"
	fi
}
for unwind in cached check libunwind; do
	want=$(within 60 "$MF_TESTS/prog_callback" jump $n); prc=$?
	rm -rf "$mf_work"/malloc_freq.*
	got=$(MALLOC_FREQ_UNWIND=$unwind profile_within 60 "$MF_TESTS/prog_callback" jump $n 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "$prc:$want" "$unwind: $n callbacks that return and one left by longjmp: runs as without the profiler"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';main;[^;]*dl_iterate_phdr;callback_return;site_callback;malloc$')" $n \
		"... the callbacks' $n calls, each under its callback and dl_iterate_phdr"
	is "$(calls "$mf_work/c.txt" ';main;[^;]*dl_iterate_phdr;callback_leave;site_left;malloc$')" 1 \
		"... the call of the callback left by longjmp"
	is "$(calls "$mf_work/c.txt" ';main;site_after;malloc$')" $n "... and the $n calls after it, with their stack"
	# (and printf's buffer for stdout)
	like "$("$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null)" "^malloc_freq: $((2 * n + 2)) calls" \
		"... $((2 * n + 2)) calls in all"
	is "$(calls "$mf_work/c.txt" '')" $((2 * n + 2)) "... each with its stack"
	unattributed
done

# Threads allocating from new stacks inside callbacks (holding the loader's lock) while another
# loads and unloads a library (the profiler's slow steps then wait for that lock) and main forks:
# the fork waits for the slow steps under way, a thread that holds the loader's lock is not kept
# waiting for the fork, and a child that inherits that lock held (taken or let go of at that
# moment, too) knows it.
plugin="$MF_TESTS/.libs/plugin.so"
[ -f "$plugin" ] || bail "no $plugin"
for unwind in cached check; do
	for run in 1 2; do
		# (under qemu-user a child forked from threads may wait for ever on a lock of
		# qemu's own, as t_hazards says)
		native "$unwind, run $run: forks while threads allocate inside callbacks (qemu-user's own locks)" || continue
		# (a hang is told by the time limit: 300 s, as check mode's 300 forks take 40 s
		# at a load of 10 on two cores, some 15 s of it CPU time)
		got=$(MALLOC_FREQ_UNWIND=$unwind profile_within 300 "$MF_TESTS/prog_callback" fork 300 "$plugin" 2> /dev/null); rc=$?
		is "$rc:$got" "0:fork: 300 children exited 0" "$unwind, run $run: forks while threads allocate inside callbacks: none hangs"
	done
done

[ -x "$MF_TESTS/prog_callback_cxx" ] || bail "no $MF_TESTS/prog_callback_cxx"
for unwind in cached libunwind check; do
	want=$(within 60 "$MF_TESTS/prog_callback_cxx" 4 $n); prc=$?
	rm -rf "$mf_work"/malloc_freq.*
	got=$(MALLOC_FREQ_UNWIND=$unwind profile_within 60 "$MF_TESTS/prog_callback_cxx" 4 $n 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "$prc:$want" "$unwind: 4 threads each leave $n callbacks by a C++ throw: runs as without the profiler"
	if [ "$prc" -ne 0 ]; then # (Debian 11's glibc 2.31 keeps its lock when a callback throws)
		skip "$unwind: the calls: the program itself does not finish here (status $prc)"
		unwind=skipped
		continue
	fi
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" '[^;]*dl_iterate_phdr;callback_throw;site_thrown;malloc$')" $((4 * n)) \
		"... the callbacks' $((4 * n)) calls, each under its callback"
	is "$(calls "$mf_work/c.txt" 'callback_throw;__cxa_allocate_exception;malloc$')" $((4 * n)) \
		"... and the $((4 * n)) exceptions they allocate"
	is "$(calls "$mf_work/c.txt" ';worker;site_after;malloc$')" $((4 * n)) "... and the $((4 * n)) calls after them, with their stack"
	unattributed
done
if [ "$unwind" = check ]; then
	like "$(cat "$mf_work/err")" "unwind check: [0-9]+ stacks compared, [0-9]+ by the cached walk, 0 differed" \
		"check mode: no stack differs from libunwind's"
else
	skip "check mode: the program itself does not finish here"
fi
done_testing
