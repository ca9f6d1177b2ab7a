#!/bin/sh
# --html's windows and stacked chart, read by headless Chromium (tests/progs/html_check.js): on
# tests/progs/prog_timeline.c's phases of known counts with a snapshot after each, a window chosen on
# the chart by clicking two marks (or dragging from one to the other) shows the counts of
# mf_print --between A B (--snapshot B from the start, --since A to the end), in the flame
# graph's total and the summary; the stacked chart's series sum at each snapshot to that
# snapshot's total; with more stacks than the page keeps (tests/progs/prog_threads.c), the rest are
# folded, said, and the windows stay exact; the address names a window (#window=1-2). Its
# screenshot is kept as tests/progs/t_html_window.png.
. "$srcdir/tests/tap.sh"
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
[ -n "$chromium" ] || skip_all "no chromium to read the page (apt-get install chromium)"
command -v node > /dev/null || skip_all "no node to drive chromium (apt-get install nodejs)"
A=6400 B=3200 C=1600 D=800
MALLOC_FREQ_TIMELINE=0.1 profile_within 60 "$MF_TESTS/prog_timeline" $A:300 snap $B:300 snap \
	$C:300 snap $D:300 > /dev/null
is "$?" 0 "prog_timeline: four phases, a snapshot after each of the first three"
d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
"$MF_PRINT" --html "$mf_work/page.html" "$d" 2> "$mf_work/err"
is "$?:$(cat "$mf_work/err")" "0:" "--html writes the page, saying nothing"
# (each window as a click on one mark then the other; 1~2 dragged; 0 the start, -1 the end)
node "$srcdir/tests/progs/html_check.js" "$chromium" "$mf_work/page.html" "$MF_TESTS/t_html_window.png" \
	main "" function "1:2 1:3 0:2 2:-1 0:-1 3~2" > "$mf_work/seen" 2>&1
ok $? "chromium loads the page and chooses the windows on its chart"
sed 's/^/# /' "$mf_work/seen"
seen() { sed -n "s/^$1=//p" "$mf_work/seen"; }
is "$(seen errors)" "[]" "no console error, no exception"
like "$(seen window_note)" "^window: counts .*every stack\)\$" "every stack kept: said"
is "$(seen requests)" "[]" "no request but the page itself"
is "$(seen marks)" "[0,1,2,3,-1]" "the chart's marks: the start, the three snapshots, the end"
# mf_print's own counts of a window: calls (its summary) and bytes (--collapsed --bytes, exact)
counts() {
	c=$("$MF_PRINT" "$@" "$d" 2> /dev/null | sed -n '1s/^malloc_freq: \([0-9]*\) calls.*/\1/p')
	b=$("$MF_PRINT" --collapsed --bytes "$@" "$d" 2> /dev/null | awk '{ s += $NF } END { printf "%.0f\n", s }')
	echo "$c|$b"
}
window() { seen "window_$1" | cut -d'|' -f1,2; }
is "$(window 1_2)" "$B|$((B * 100))" "window 1-2: phase two's $B calls of 100 bytes"
is "$(window 1_2)" "$(counts --between 1 2)" "... as mf_print --between 1 2 counts them"
is "$(window 1_3)" "$((B + C))|$(((B + C) * 100))" "window 1-3: phases two and three"
is "$(window 1_3)" "$(counts --between 1 3)" "... as --between 1 3"
is "$(window 0_2)" "$(counts --snapshot 2)" "from the start to snapshot 2: as --snapshot 2 ($(window 0_2))"
is "$(window 2_-1)" "$(counts --since 2)" "from snapshot 2 to the end: as --since 2 ($(window 2_-1))"
is "$(window 0_-1)" "$(counts --since 0)" "the whole run: as --since 0 ($(window 0_-1))"
is "$(window 3_2)" "$C|$((C * 100))" "dragged from mark 3 back to mark 2: phase three's window"
like "$(seen window_1_2 | cut -d'|' -f3)" "^3,200 calls, 312\.5 KiB requested; .*counts after snapshot 1 up to snapshot 2\$" \
	"the summary says the window's counts and which window"
is "$(seen window_reset)" "$(counts | cut -d'|' -f1)" "'whole profile': the profile's total again"
# the stacked chart: each snapshot's series sum to its total (the end's: the whole run's)
python3 - "$mf_work/seen" > "$mf_work/stacked" << 'PY' || echo "unreadable" > "$mf_work/stacked"
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("stacked="):
        s = json.loads(line[8:])
        print(s["metric"], s["series"][-1], " ".join(str(p["values"][0]) for p in s["points"][:-1]))
        for p in s["points"]:
            print(p["number"], p["sum"], sum(p["values"]))
PY
is "$(sed -n 1p "$mf_work/stacked")" "calls other $A $((A + B)) $((A + B + C))" \
	"the stacked chart by calls: the phases' stack first, $A, $((A + B)), $((A + B + C)) at the snapshots; 'other' last"
expect="1 $(counts --snapshot 1 | cut -d'|' -f1)"
for n in 2 3; do expect="$expect
$n $(counts --snapshot $n | cut -d'|' -f1)"; done
expect="$expect
-1 $(counts --since 0 | cut -d'|' -f1)"
is "$(sed -n '2,$p' "$mf_work/stacked" | awk '$2 == $3 { print $1, $2 }')" "$expect" \
	"... its series sum at each snapshot to that snapshot's total (--snapshot N), at the end to the run's"
# a window named in the address
node "$srcdir/tests/progs/html_check.js" "$chromium" "$mf_work/page.html#window=1-2" "$mf_work/hash.png" \
	> "$mf_work/seen_hash" 2>&1
is "$(sed -n 's/^total=//p' "$mf_work/seen_hash")" "$B" "page.html#window=1-2: the page opens on window 1-2's $B calls"
[ "$(head -c 8 "$MF_TESTS/t_html_window.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
ok $? "a PNG screenshot kept as tests/progs/t_html_window.png"

# more stacks than the page keeps: beside the phases, a process of 1,200 threads of a stack each
# (tests/progs/prog_threads.c, no timeline, no snapshot); the rest are folded, said on the page, and
# the windows' totals are still mf_print's (--between leaves the process without the snapshots out, as the page does)
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_TIMELINE=off profile_within 60 "$MF_TESTS/prog_threads" many 1200 > /dev/null
MALLOC_FREQ_TIMELINE=0.1 profile_within 60 "$MF_TESTS/prog_timeline" $A:300 snap $B:300 snap \
	$C:300 > /dev/null
d=$mf_work
"$MF_PRINT" --html "$mf_work/page.html" "$d" 2> /dev/null
folded=$(sed -n 's/.*"windows":{[^}]*"folded":\([0-9]*\).*/\1/p' "$mf_work/page.html")
[ "${folded:-0}" -ge 600 ]; ok $? "a page of 1,200 threads' stacks and more folds all but about 500 ($folded)"
node "$srcdir/tests/progs/html_check.js" "$chromium" "$mf_work/page.html" "$mf_work/folded.png" \
	main "" function "1:2 0:-1" > "$mf_work/seen" 2>&1
ok $? "chromium reads it"
sed 's/^/# /' "$mf_work/seen"
is "$(seen errors)" "[]" "no console error"
is "$(window 1_2)" "$(counts --between 1 2)" "window 1-2, folded: as --between 1 2 ($(window 1_2))"
is "$(window 0_-1)" "$(counts --since 0)" "the whole run, folded: as --since 0 ($(window 0_-1))"
like "$(seen window_0_-1 | cut -d'|' -f3)" "counts of the whole run" "the summary says the window"
like "$(seen window_note)" "stacks \(each thread's apart\) beyond the 500 busiest .*: $folded of [0-9]+ folded into their thread's \"\(other stacks, folded\)\"" \
	"the page says how many stacks it folded"
done_testing
