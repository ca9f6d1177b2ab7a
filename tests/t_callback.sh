#!/bin/sh
# Allocations inside a program's dl_iterate_phdr callbacks (the loader's lock is held there).
. "$srcdir/tests/tap.sh"

# Threads allocating from new stacks inside callbacks (holding the loader's lock) while another
# loads and unloads a library (the profiler's slow steps then wait for that lock) and main forks:
# the fork waits for the slow steps under way, and a child that inherits that lock held (taken
# or let go of at that moment, too) knows it.
plugin="$MF_TESTS/.libs/plugin.so"
[ -f "$plugin" ] || bail "no $plugin"
for unwind in cached check; do
	for run in 1 2; do
		got=$(MALLOC_FREQ_UNWIND=$unwind profile_within 120 "$MF_TESTS/prog_callback" fork 300 "$plugin" 2> /dev/null); rc=$?
		is "$rc:$got" "0:fork: 300 children exited 0" "$unwind, run $run: forks while threads allocate inside callbacks: none hangs"
	done
done
done_testing
