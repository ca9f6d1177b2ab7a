#!/bin/sh
# SIGKILL after N allocations leaves exactly N on disk, in a file reported as not finalized.
. "$srcdir/tests/tap.sh"
n=12345
env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_kill" $n > "$mf_work/out" &
pid=$!
i=0
while ! grep -q ready "$mf_work/out" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
grep -q ready "$mf_work/out"; ok $? "program reached the point after $n allocations"
kill -9 $pid
wait $pid; rc=$?
is "$rc" 137 "killed by SIGKILL"
d="$mf_work/malloc_freq.$pid"
[ -d "$d" ]; ok $? "profile directory malloc_freq.$pid exists"
"$MF_PRINT" --collapsed "$d" > "$mf_work/c.txt"; ok $? "mf_print reads the killed process's profile"
is "$(calls "$mf_work/c.txt" ';site_before_end;malloc$')" $n "all $n calls are on disk"
like "$("$MF_PRINT" "$d")" "1 file not finalized" "the report says the file was not finalized"
# The other ways a process ends without finalizing: every call recorded is still on disk.
for how in abort _exit segv; do
	rm -rf "$mf_work"/malloc_freq.*
	(ulimit -c 0; profile "$MF_TESTS/prog_kill" 777 $how) 2> /dev/null
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2>&1
	is "$(calls "$mf_work/c.txt" ';site_before_end;malloc$')" 777 "$how: all 777 calls are on disk"
done
done_testing
