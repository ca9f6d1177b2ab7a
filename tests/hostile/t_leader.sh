#!/bin/sh
# The main thread leaves with pthread_exit and a worker allocates afterwards, through call
# paths new to the profiler: their stacks are taken as before (process_vm_readv of a process
# whose thread-group leader has exited fails with ESRCH), none is recorded bare.
. "$srcdir/tests/tap.sh"
for cache in fresh off; do
	for run in 1 2; do
		rm -rf "$mf_work"/malloc_freq.* "$mf_work/cache"
		[ $cache = off ] && MALLOC_FREQ_CACHE=off
		got=$(profile_within 20 "$MF_TESTS/prog_leader"); rc=$?
		MALLOC_FREQ_CACHE="$mf_work/cache"
		is "$rc:$got" "0:leader: 1000 calls after the main thread left" "rule cache $cache, run $run: exits 0"
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
		is "$(calls "$mf_work/c.txt" ';worker;(prog_rec;)*site_leader;malloc$')" 1000 "... the worker's 1000 calls keep their stacks"
	done
done
done_testing
