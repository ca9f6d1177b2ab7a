#!/bin/sh
# make check-long: a long-running program with MALLOC_FREQ_SNAPSHOT_INTERVAL=1 for 60 s (4
# threads allocating all the while, tests/progs/prog_snapshot busy): 60 interval snapshots, totals
# that never decrease, the last within one interval's calls of the final profile, and every
# snapshot readable. Environment as for make check. Ends with "N passed, N failed".
. "$srcdir/tests/tap.sh"
MALLOC_FREQ_SNAPSHOT_INTERVAL=1 profile_within 120 "$MF_TESTS/prog_snapshot" busy 60.5 > /dev/null
is "$?" 0 "interval 1 s, 60.5 s of 4 busy threads: exits 0"
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --list "$dir" > "$mf_work/list" 2> "$mf_work/err"
is "$?:$(cat "$mf_work/err")" "0:" "mf_print --list reads every snapshot, says nothing on stderr"
is "$(awk 'NR > 1 && /interval/' "$mf_work/list" | wc -l)" 60 "60 interval snapshots"
is "$(awk 'NR > 1 { if ($4 + 0 < prev) d++; prev = $4 + 0 } END { print d + 0 }' "$mf_work/list")" 0 \
	"their totals never decrease"
total=$("$MF_PRINT" "$dir" 2> /dev/null | awk 'NR == 1 { print $2 }')
# calls per interval: the mean between the first and the last snapshot
per=$(awk 'NR == 2 { first = $4 } NR > 1 { last = $4; n++ } END { printf "%d", (last - first) / (n - 1) }' "$mf_work/list")
last=$(awk 'END { print $4 }' "$mf_work/list")
[ "$last" -le "$total" ] && [ $((total - last)) -le $((per + per / 2)) ]
ok $? "the last one ($last calls) is within an interval ($per calls) of the final profile ($total)"
bad=0
for s in $(awk 'NR > 1 { print $1 }' "$mf_work/list"); do
	n=$("$MF_PRINT" --snapshot "$s" "$dir" 2> /dev/null | awk 'NR == 1 { print $2 }')
	want=$(awk -v s="$s" '$1 == s { print $4 }' "$mf_work/list")
	[ "$n" = "$want" ] || bad=$((bad + 1))
done
is "$bad" 0 "each snapshot read with --snapshot N totals what --list says"
echo "$((mf_n - mf_failed)) passed, $mf_failed failed"
[ "$mf_failed" = 0 ]
