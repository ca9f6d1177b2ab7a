#!/bin/sh
# make check-hostile: hostile hosts at full size, and the chancy ones many times over (each
# also has a quick version in make check): 15000 live threads with 64 KiB stacks against
# vm.max_map_count; 5 x 100 rounds of asynchronous cancellation then fork; 20 runs each of
# coroutines on 4 and 8 KiB stacks; 10 runs of siglongjmp out of signal handlers. Environment
# as for make check. Ends with "N passed, N failed".
. "$srcdir/tests/tap.sh"
echo "# vm.max_map_count: $(cat /proc/sys/vm/max_map_count 2> /dev/null || echo ?)"
n=15000
want=$(within 300 "$MF_TESTS/prog_mappings" many $n)
is "$want" "many: $n of $n threads started" "without the profiler: $n live threads with 64 KiB stacks"
got=$(profile_within 300 "$MF_TESTS/prog_mappings" many $n 2> "$mf_work/err")
is "$got" "$want" "profiled: as many threads ($(head -c 300 "$mf_work/err"))"
files=$(ls "$mf_work"/malloc_freq.*/ | grep -c '\.prof$')
is "$files" $((n + 1)) "... and every one of them recorded in a file of its own"
rm -rf "$mf_work"/malloc_freq.*

MF_AFTER="$MF_TESTS/.libs/bumpalloc.so"
for run in 1 2 3 4 5; do
	got=$(profile_within 120 "$MF_TESTS/prog_cancel" 100); rc=$?
	is "$rc:$got" "0:cancel: 100 rounds, 100 children exited 0" "100 rounds of cancelled threads then fork, run $run"
	rm -rf "$mf_work"/malloc_freq.*
done
fails=0
for run in $(seq 10); do
	got=$(profile_within 60 "$MF_TESTS/prog_longjmp" loop 100000 2> "$mf_work/err"); rc=$?
	[ $rc = 0 ] && ! grep -q 'forked by a signal handler' "$mf_work/err" &&
		! "$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null | grep -q 'arrived while' || fails=$((fails + 1))
	rm -rf "$mf_work"/malloc_freq.*
done
is "$fails" 0 "10 runs of siglongjmp out of signal handlers: none leaves the profiler marked busy"
unset MF_AFTER
for size in 4096 8192; do
	fails=0
	for run in $(seq 20); do
		profile_within 60 "$MF_TESTS/prog_stacks" coro $size 50 > /dev/null 2>&1 || fails=$((fails + 1))
		rm -rf "$mf_work"/malloc_freq.*
	done
	is "$fails" 0 "20 runs of coroutines on $size-byte stacks: none fails"
done
echo "$((mf_n - mf_failed)) passed, $mf_failed failed"
[ "$mf_failed" = 0 ]
