#!/bin/sh
# Memory mappings per recording thread (vm.max_map_count bounds a process's mappings, and so
# how many threads it can have): 50 live threads that have allocated add at most one mapping
# each beyond what they add without the profiler, a few for the process (libunwind's pools,
# made at its first use, which a thread's first stack may be), and one for each time the pool
# of thread states doubled (it starts with one: 6 times for 51). (make check-hostile runs
# 15000 threads.)
. "$srcdir/tests/tap.sh"
k=50
# added OUTPUT: mappings added by the k threads
added() { printf '%s\n' "$1" | sed -n 's/^mappings: \([0-9]*\) before, \([0-9]*\) with .*/\2 - \1/p'; }
plain=$(within 20 "$MF_TESTS/prog_mappings" count $k)
prof=$(profile_within 20 "$MF_TESTS/prog_mappings" count $k)
p=$(($(added "$plain"))) q=$(($(added "$prof")))
each=$(awk -v d=$((q - p)) -v k=$k 'BEGIN { printf "%.2f", d / k }')
[ "$p" -gt 0 ] && [ $((q - p)) -le $((k + 4 + 6)) ]
ok $? "$k threads: $q mappings added profiled, $p plain: at most one more per thread, 4, and 6 doublings ($each)"
done_testing
