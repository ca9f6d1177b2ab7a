#!/bin/sh
# A timer's signal handler leaves with siglongjmp, abandoning the profiler wherever it
# interrupted it (the handler itself never allocates). An abandoned entry is recognised and
# recovered: no later call counts as one that arrived while the profiler was recording, every
# call that returned is recorded, a later fork's child is recorded in its own directory, and
# when the timer starts before the first allocation the directory is not left empty.
# glibc's malloc is not async-signal-safe: a bump allocator preloaded after the profiler serves.
. "$srcdir/tests/tap.sh"
MF_AFTER="$MF_TESTS/.libs/bumpalloc.so"
[ -f "$MF_AFTER" ] || bail "no $MF_AFTER"
n=100000
for mode in loop first; do
	want=$(within 20 env LD_PRELOAD="$MF_AFTER" "$MF_TESTS/prog_longjmp" $mode $n 2> /dev/null); prc=$?
	# (under qemu-user the timer's signals can outrun their emulated handler: the program,
	# profiled or not, never ends; there is then nothing to compare)
	if [ $prc = 124 ]; then
		skip "$mode: $n calls: the program does not end in 20 s without the profiler either"
		continue
	fi
	rm -rf "$mf_work"/malloc_freq.*
	got=$(profile_within 20 "$MF_TESTS/prog_longjmp" $mode $n 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "$prc:$want" "$mode: $n calls, some abandoned by siglongjmp: runs as without the profiler"
	jumps=$(sed -n 's/^jumps: //p' "$mf_work/err")
	report=$("$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null)
	like "$report" "^malloc_freq: " "... mf_print reads its profiles"
	if printf '%s\n' "$report" | grep -q 'arrived while the profiler was recording'; then
		fail "... no call counted as arriving while the profiler was recording (the handler never allocates)"
	else
		pass "... no call counted as arriving while the profiler was recording (the handler never allocates)"
	fi
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	got=$(calls "$mf_work/c.txt" ';main;(prog_rec;)*site_loop;malloc$')
	[ -n "$jumps" ] && [ "$got" -ge $((n - jumps)) ] && [ "$got" -le $n ]
	ok $? "... every call that returned is recorded: $got of $n, ${jumps:-?} abandoned"
	children=0
	for d in "$mf_work"/malloc_freq.*; do
		"$MF_PRINT" --collapsed "$d" > "$mf_work/c.txt" 2> /dev/null
		[ "$(calls "$mf_work/c.txt" ';site_child;malloc$')" = 10 ] && children=$((children + 1))
	done
	is "$children" 1 "... the later fork's child is recorded in its own directory"
	is "$(grep -c 'forked by a signal handler' "$mf_work/err")" 0 "... and not taken for one forked by a signal handler"
done
done_testing
