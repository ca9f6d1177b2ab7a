#!/bin/sh
# The timeline (MALLOC_FREQ_TIMELINE), on tests/progs/prog_timeline.c: phases of known counts
# (multiples of the 64 calls between two looks at the clock) apart by pauses longer than the
# interval show in mf_print --timeline as bursts of exactly those counts, and its rows sum to
# the summary's total, as --json's points do, whose spread totals give the same rows; with lifetimes the live bytes of a phase hold
# through the pause after it, and the last row's live blocks are the summary's leaks; with
# more records than a file keeps, the rows still sum exactly; a process killed by SIGKILL
# leaves its series; --html draws the chart (its screenshot kept as tests/progs/t_timeline.png); a
# profile of format 8 reads, with no timeline, said once; MALLOC_FREQ_TIMELINE=off keeps
# none, a bad value is said and the default used.
. "$srcdir/tests/tap.sh"
T=0.2 N=6400 M=3200
# bursts FILE: the calls of each run of non-empty rows of --timeline, with the rows' sum last
bursts() {
	awk '/^ +time +calls/ { on = 1; next } on && $2 == "s" {
		if ($3 > 0) b += $3; else if (b) { printf "%d ", b; b = 0 }; sum += $3 }
		END { if (b) printf "%d ", b; printf "sum %d", sum }' "$1"
}
total() { sed -n 's/^malloc_freq: \([0-9]*\) calls.*/\1/p' "$1"; }

MALLOC_FREQ_TIMELINE=$T profile_within 60 "$MF_TESTS/prog_timeline" $N:1000 $M:1000 > /dev/null
is "$?" 0 "prog_timeline $N:1000 $M:1000 exits 0"
d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
"$MF_PRINT" --timeline "$d" > "$mf_work/tl" 2> "$mf_work/err"
is "$?" 0 "mf_print --timeline exits 0"
is "$(cat "$mf_work/err")" "" "... and says nothing on stderr"
like "$(cat "$mf_work/tl")" "malloc_freq\.[0-9]+ \(prog_timeline, pid [0-9]+\): [0-9.]+ s, a row per 0\.200 s" \
	"a table per process: its program and pid, its span, a row per interval"
b=$(bursts "$mf_work/tl")
like "$b" "^$N $M .*sum $(total "$mf_work/tl")\$" \
	"bursts of $N and $M calls, apart, and the rows sum to the total ($b)"
like "$(grep -m1 "^ *[0-9.]* s  *$N " "$mf_work/tl")" " $N  *$((N * 5)) .*625\.0 KiB " \
	"the first burst's row: its calls per second and requested bytes (100 each)"

# --json: the same series, its last point the totals
if command -v python3 > /dev/null 2>&1; then
	"$MF_PRINT" --json "$d" 2> /dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin); t = d["processes"][0]["timeline"]; p = t["points"]
assert t["columns"][:3] == ["time_ns", "calls", "bytes"] and p[0][1] == 0, t
assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(p, p[1:])), p
assert p[-1][1] == d["summary"]["total"]["calls"] and p[-1][2] == d["summary"]["total"]["bytes"], p
print(" ".join(str(b[1] - a[1]) for a, b in zip(p, p[1:]) if b[1] > a[1]))' > "$mf_work/json" 2>&1
	is "$?" 0 "--json: a timeline whose points never go back and end at the totals"
	# (the second burst's first look, 64 calls in, writes a record after the pause; its last
	# look, at its end, is a point of its own when the burst took the coarse clock past a
	# tick: a slow machine's, or qemu-user's)
	like "$(cat "$mf_work/json")" "^$N ($M|64 $((M - 64)))( 1)?\$" \
		"... whose points add $N, then $M calls ($(cat "$mf_work/json"))"
	# its spread totals give --timeline's rows: each row's calls, interpolated as documented
	"$MF_PRINT" --json "$d" 2> /dev/null | python3 -c 'import json, sys
t = json.load(sys.stdin)["processes"][0]["timeline"]; p, sp = t["points"], t["spread"]
assert t["spread_columns"][0] == "calls" and t["spread_columns"][3] == "calls_before", t
assert len(sp) == len(p) and sp[-1][0] == p[-1][1], (sp[-1], p[-1])
def at(x):  # the spread calls at time x: linear from a point to the next one just before
	i = max(k for k in range(len(p)) if p[k][0] <= x or k == 0)
	if i == len(p) - 1 or x <= p[i][0]:
		return sp[i][0]
	f = (x - p[i][0]) / (p[i + 1][0] - p[i][0])
	return sp[i][0] + int(f * float(sp[i + 1][3] - sp[i][0]) + 0.5)
start, span = p[0][0], p[-1][0] - p[0][0]
row = t["span_ns"] or 10**9
while span // row >= 40:
	row *= 2
rows, was, off = [], 0, row
while True:
	now = at(start + min(off, span)); rows.append(now - was); was = now
	if off >= span:
		break
	off += row
print(" ".join(map(str, rows)))' > "$mf_work/json_rows" 2>&1
	is "$(cat "$mf_work/json_rows")" "$(awk '/^ +time +calls/ { on = 1; next } on && $2 == "s" { printf "%s%s", n++ ? " " : "", $3 }' "$mf_work/tl")" \
		"--json's spread totals give --timeline's rows, interpolated as docs/json.md says ($(cat "$mf_work/json_rows"))"
else
	skip "no python3 (it reads the JSON)"
	skip "no python3 (it reads the JSON)"
	skip "no python3 (it reads the JSON)"
fi

# with lifetimes: live bytes and blocks, the last row's those not freed at the end
# (the checks of the first phase's row need that phase within one interval: a run whose
# phase a busy machine spread over two is run again, at most three times, and said)
for try in 1 2 3; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_TIMELINE=$T profile_within 60 "$MF_TESTS/prog_timeline" \
		$N:1000 $M:1000 > /dev/null
	d=$(ls -d "$mf_work"/malloc_freq.*)
	"$MF_PRINT" --timeline "$d" > "$mf_work/tl" 2> /dev/null
	grep -q "^ *[0-9.]* s  *$N " "$mf_work/tl" && break
	echo "# run $try: the first phase's $N calls fell in more than one row; run again"
done
leaked=$(sed -n 's/^  lifetimes: \([0-9]*\) blocks\{0,1\} .*/\1/p' "$mf_work/tl")
is "$(tail -n 1 "$mf_work/tl" | awk '{ print $NF }')" "$leaked" \
	"lifetimes: the last row's live blocks are the summary's leaked blocks ($leaked)"
like "$(grep ' time .*calls' "$mf_work/tl")" "live +live blocks" "... in columns of their own"
# (the look at the first phase's last call comes before that call's block is live)
like "$(grep -m1 "^ *[0-9.]* s  *$N " "$mf_work/tl")" " 62(4\.9|5\.0) KiB  *-\$" \
	"the first phase's $N blocks of 100 bytes live (but the one being made) as the pause begins"
like "$(awk -v n=$N '$3 == n { burst = 1 } burst && $3 == 0 && $4 == 0' "$mf_work/tl" | head -n 1)" " 62(4\.9|5\.0) KiB  *-\$" \
	"... and through the pause (live blocks not known there: -)"

# --html: the chart above the flame graph, read by headless Chromium: the series' points, its
# calls the total, the snapshots marked (interval snapshots every 0.5 s)
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -n "$chromium" ] && command -v node > /dev/null; then
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_TIMELINE=$T MALLOC_FREQ_SNAPSHOT_INTERVAL=0.5 \
		profile_within 60 "$MF_TESTS/prog_timeline" $N:1000 $M:1000 > /dev/null
	d=$(ls -d "$mf_work"/malloc_freq.*)
	snaps=$(ls -d "$d"/snap.* | wc -l)
	"$MF_PRINT" --html "$mf_work/page.html" "$d" 2> /dev/null
	node "$srcdir/tests/progs/html_check.js" "$chromium" "$mf_work/page.html" "$MF_TESTS/t_timeline.png" main \
		> "$mf_work/seen" 2>&1
	ok $? "chromium loads the page"
	seen() { sed -n "s/^$1=//p" "$mf_work/seen"; }
	is "$(seen errors)" "[]" "... with no console error"
	total=$("$MF_PRINT" "$d" 2> /dev/null | sed -n 's/^malloc_freq: \([0-9]*\) calls.*/\1/p')
	like "$(seen chart)" "^\{\"process\":0,\"points\":[4-9],\"bars\":[0-9]+,\"snapshots\":$snaps,\"calls\":$total,\"maxLive\":[1-9][0-9]*\}\$" \
		"the chart: the series' points, its $snaps snapshots marked, its calls the total $total, live bytes"
else
	skip "no chromium and node to read the page"
	skip "no chromium and node to read the page"
	skip "no chromium and node to read the page"
fi

# more records than a file keeps (48): every other goes, the interval doubles, sums stay exact
rm -rf "$mf_work"/malloc_freq.*
set --
for i in $(seq 1 60); do set -- "$@" 64:20; done
MALLOC_FREQ_TIMELINE=0.005 profile_within 60 "$MF_TESTS/prog_timeline" "$@" > /dev/null
d=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --timeline "$d" > "$mf_work/tl" 2> /dev/null
like "$(bursts "$mf_work/tl")" "sum $(total "$mf_work/tl")\$" \
	"60 phases over 1.2 s at 5 ms: the rows sum to the total ($(total "$mf_work/tl"))"
like "$(cat "$mf_work/tl")" "a row per 0\.0[1-9][0-9] s" "... rows wider than 5 ms (the records thinned)"

# SIGKILL mid-run: the series is in the file
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_TIMELINE=$T MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" \
	"$MF_TESTS/prog_timeline" wait $N:1000 $M:0 > "$mf_work/out" &
pid=$!
i=0
while ! grep -q ready "$mf_work/out" 2> /dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid
wait $pid
d="$mf_work/malloc_freq.$pid"
"$MF_PRINT" --timeline "$d" > "$mf_work/tl" 2> /dev/null
is "$?" 0 "killed by SIGKILL: --timeline reads its profile"
like "$(bursts "$mf_work/tl")" "^$N ($M|$((M + 1))) .*sum $(total "$mf_work/tl")\$" \
	"... bursts of $N and $M calls (and a last call made after the last look), the rows summing to the total"
like "$(cat "$mf_work/tl")" "ended unrecorded: its last calls are at the end" \
	"... and says that a thread's end is not known"

# format 8: the same profile without its timeline reads, with no timeline, said once
if command -v python3 > /dev/null 2>&1; then
	old="$mf_work/old/malloc_freq.1"
	mkdir -p "$old" && cp "$d"/* "$old"/
	python3 - "$old" << 'PY'
import glob, struct, sys
for f in glob.glob(sys.argv[1] + "/*.prof"):
    b = bytearray(open(f, "rb").read())
    struct.pack_into("<III", b, 8, 8, 0x01020304, 4096)  # (a one-page header then)
    b[136:136 + 32] = bytes(32)    # the timeline's header fields: reserved in format 8
    b[1024:4096] = bytes(3072)     # its records
    open(f, "wb").write(bytes(b[:4096] + b[12288:]))
for name in ("process", "modules"):
    b = bytearray(open(sys.argv[1] + "/" + name, "rb").read())
    struct.pack_into("<I", b, 8, 8)
    open(sys.argv[1] + "/" + name, "wb").write(bytes(b))
PY
	"$MF_PRINT" --timeline "$old" > "$mf_work/old.txt" 2> "$mf_work/old.err"
	is "$?" 0 "a profile of format 8 reads"
	is "$(grep -c 'format 8 or older: no timeline' "$mf_work/old.txt")" 1 "... and has no timeline, said once"
	like "$(cat "$mf_work/old.txt")" "^malloc_freq: $(total "$mf_work/tl") calls" "... with the same total"
else
	skip "no python3 (it writes the format 8 profile)"
fi

# a reset: the timeline is the window's, since the reset, its rows summing to its total
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_TIMELINE=$T profile_within 60 "$MF_TESTS/prog_timeline" $N:1000 reset $M:1000 $M:0 > /dev/null
"$MF_PRINT" --timeline "$mf_work"/malloc_freq.* > "$mf_work/tl" 2> /dev/null
is "$(bursts "$mf_work/tl")" "$M $((M + 1)) sum $((2 * M + 1))" \
	"after malloc_freq_reset: bursts of $M and $M (and the last call), the rows summing to the window's total"
is "$(total "$mf_work/tl")" $((2 * M + 1)) "... which is the summary's"
"$MF_PRINT" --timeline --since 0 "$mf_work"/malloc_freq.* > "$mf_work/tl" 2> /dev/null
like "$(bursts "$mf_work/tl")" "^$N $M $((M + 1)) sum $((N + 2 * M + 1))\$" "--since 0: the whole run's bursts"

# a file whose interval is the most a 64-bit word holds: a row or so, not an endless count
if command -v python3 > /dev/null 2>&1; then
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_TIMELINE=0.05 profile_within 60 "$MF_TESTS/prog_timeline" 640:100 > /dev/null
	python3 - "$mf_work"/malloc_freq.*/*.prof << 'PY'
import struct, sys
for f in sys.argv[1:]:
    d = bytearray(open(f, "rb").read())
    struct.pack_into("<Q", d, 144, (1 << 64) - 1)  # timeline_interval_ns
    open(f, "wb").write(d)
PY
	within 20 "$MF_PRINT" --timeline "$mf_work"/malloc_freq.* > "$mf_work/tl" 2> /dev/null
	is "$?:$(grep -c ' s ' "$mf_work/tl")" "0:1" "an interval of 2^64 - 1 ns in the file: --timeline ends, with one row"
else
	skip "no python3 (it writes the damaged file)"
fi

# off, and a bad value
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_TIMELINE=off profile_within 60 "$MF_TESTS/prog_timeline" 64:0 > /dev/null
"$MF_PRINT" --timeline "$mf_work"/malloc_freq.* > "$mf_work/tl" 2> /dev/null
like "$(cat "$mf_work/tl")" "1 process kept no timeline \(MALLOC_FREQ_TIMELINE=off\)" "MALLOC_FREQ_TIMELINE=off: none kept, said"
MALLOC_FREQ_TIMELINE=0.0001 profile_within 60 "$MF_TESTS/prog_timeline" 64:0 2> "$mf_work/err" > /dev/null
like "$(cat "$mf_work/err")" 'MALLOC_FREQ_TIMELINE="0.0001" is not a number of seconds from 0.001 to 86400' \
	"a bad value is said on stderr"
done_testing
