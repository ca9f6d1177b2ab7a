#!/bin/sh
# The timeline by entry point (format 11), on tests/progs/prog_entries.c: phases of malloc,
# calloc, realloc, posix_memalign and aligned_alloc of known counts and sizes, each followed by
# a pause longer than the interval, 64 more calls of its entry point (so that a whole record
# closes it) and another pause. mf_print --timeline shows each entry point's calls in the rows
# of its phase; --json's points (read by python3's json module) hold, at each phase's end,
# exactly the calls and bytes of each entry point by then, and at every point their sums are
# the point's calls and bytes. A few entry points are columns of their own. The same profile
# rewritten as format 10 (a one-page header, 64-byte records) reads as before, with no split.
# A thread that keeps few records leaves its header's pages after the first a hole, in its
# file and in a snapshot's copy of it; one that keeps more reserves them (from the hot path:
# a fork after it is not held up) and keeps all.
. "$srcdir/tests/tap.sh"
T=0.2 P=400
set -- malloc:640:100 calloc:1280:48 realloc:320:200 posix_memalign:192:256 aligned_alloc:128:512
phases=""
for p in "$@"; do
	e=${p%%:*}
	s=${p##*:}
	phases="$phases $p:$P $e:64:$s:$P"
done
# bursts FILE NAME: the calls of NAME in each run of rows that have some (the compact form:
# "NAME N" after the row's figures)
bursts() {
	awk -v name="$2" '/^ +time +calls/ { on = 1; next } on && $2 == "s" {
		n = 0; for (i = 7; i < NF; i++) if ($i == name) n = $(i + 1)
		if (n > 0) b += n; else if (b) { printf "%d ", b; b = 0 } }
		END { if (b) printf "%d ", b }' "$1"
}
total() { sed -n 's/^malloc_freq: \([0-9]*\) calls.*/\1/p' "$1"; }
# holey FILE: whether FILE's header pages after the first are a hole: on disk it has no more
# than the first page and the pages of its nodes (after 12 KiB)
holey() {
	set -- "$(stat -c '%b * %B' "$1")" "$(stat -c %s "$1")"
	[ $(($1)) -le $((4096 + ($2 - 12288 + 4095) / 4096 * 4096)) ]
}

# shellcheck disable=SC2086
MALLOC_FREQ_TIMELINE=$T profile_within 60 "$MF_TESTS/prog_entries" $phases > "$mf_work/out"
is "$?:$(cat "$mf_work/out")" "0:ready" "prog_entries: 5 phases of 5 entry points, each with its 64 after a pause"
d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
"$MF_PRINT" --timeline "$d" > "$mf_work/tl" 2> "$mf_work/err"
is "$?:$(cat "$mf_work/err")" "0:" "mf_print --timeline exits 0, says nothing on stderr"
is "$(total "$mf_work/tl")" 2880 "the summary: 2880 calls"
like "$(grep ' time .*calls' "$mf_work/tl")" "temporaries  calls by entry point besides malloc\$" \
	"four entry points besides malloc: named in each row (columns would not fit in 100)"
is "$(for e in calloc realloc posix_memalign aligned_alloc; do printf '%s: %s\n' $e "$(bursts "$mf_work/tl" $e)"; done)" \
	"calloc: 1280 64 
realloc: 320 64 
posix_memalign: 192 64 
aligned_alloc: 128 64 " "each entry point's calls in the rows of its phase and of its 64 after, apart"
# (a row's fields: time, s, calls, calls/s, requested (number, unit), temporaries, pairs) A
# row's calls by entry point are spread as its calls are, so a row may hold malloc's calls
# beside them, and each figure is rounded: they add up to at most its calls, one more per
# entry point; over all rows each entry point's sum is its total, exactly.
like "$(awk '/^ +time +calls/ { on = 1; next } on && $2 == "s" && NF > 7 { w = 0; k = 0; n++
		for (i = 8; i < NF; i += 2) { w += $(i + 1); k++; sum[$i] += $(i + 1) }
		if (w > $3 + k) bad = bad " " $1 }
	END { printf "%d rows, off:%s; calloc %d realloc %d posix_memalign %d aligned_alloc %d", n, bad,
		sum["calloc"], sum["realloc"], sum["posix_memalign"], sum["aligned_alloc"] }' "$mf_work/tl")" \
	"^([89]|1[0-9]) rows, off:; calloc 1344 realloc 384 posix_memalign 256 aligned_alloc 192\$" \
	"rows with calls by entry point (8 or more): within their calls; each entry point's rows sum to its total"
# A long phase that ends in a pause, across rows: its calls, bytes, temporaries and calls by
# entry point are spread alike (each between a whole record and the look before the pause)
rm -rf "$mf_work"/long && mkdir "$mf_work/long"
MALLOC_FREQ_DIR="$mf_work/long" MALLOC_FREQ_TIMELINE=0.1 profile_within 120 "$MF_TESTS/prog_entries" \
	calloc:64:10:150 calloc:2000000:10:300 malloc:64:10:0 > /dev/null
"$MF_PRINT" --timeline "$mf_work"/long/malloc_freq.* > "$mf_work/tl2" 2> /dev/null
is "$(awk '/^ +time +calls/ { on = 1; next } on && $2 == "s" && NF > 7 { n++
		c = $8 == "calloc" ? $9 : $8 # (a column, or named)
		if (c > $3 + 1 || $7 > $3 + 1) bad = bad " " $1 ":" $3 "/" c "/" $7 }
	END { printf "off:%s", bad }' "$mf_work/tl2")" "off:" \
	"a long phase ending in a pause: each row's calloc calls and temporaries within its calls"
if command -v python3 > /dev/null 2>&1; then
	"$MF_PRINT" --json "$d" 2> /dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin); t = d["processes"][0]["timeline"]; p, by = t["points"], t["by_entry"]
assert len(by) == len(p), (len(by), len(p))
for x, e in zip(p, by):
    assert sum(v["calls"] for v in e.values()) == x[1], (x, e)
    assert sum(v["bytes"] for v in e.values()) == x[2], (x, e)
print("sums hold")
phases = [a.split(":") for a in sys.argv[1:]]
want, calls = {}, 0
for n, (entry, count, size) in enumerate(phases):
    for k in (int(count), 64):
        want.setdefault(entry, [0, 0])
        want[entry][0] += k
        want[entry][1] += k * int(size)
        calls += k
        at = [e for x, e in zip(p, by) if x[1] == calls]
        got = {k2: [v["calls"], v["bytes"]] for k2, v in at[-1].items() if v["calls"]} if at else None
        print("%d: %s" % (calls, "exact" if got == want else "%s, not %s" % (got, want)))' \
		$(printf '%s\n' "$@") > "$mf_work/json" 2>&1
	is "$?:$(sed -n 1p "$mf_work/json")" "0:sums hold" \
		"--json: at every point, the calls and bytes by entry point sum to the point's"
	is "$(sed 1d "$mf_work/json" | tr '\n' ' ')" "640: exact 704: exact 1984: exact 2048: exact 2368: exact 2432: exact 2624: exact 2688: exact 2816: exact 2880: exact " \
		"--json: at each phase's end and after its 64, each entry point's calls and bytes exact"
else
	skip "no python3 (it reads the JSON)"
	skip "no python3 (it reads the JSON)"
fi

# format 10: the same files with a one-page header and 64-byte records read as before
if command -v python3 > /dev/null 2>&1; then
	old="$mf_work/old/malloc_freq.1"
	mkdir -p "$old" && cp "$d"/* "$old"/
	python3 - "$old" << 'PY'
import glob, struct, sys
for f in glob.glob(sys.argv[1] + "/*"):
    b = bytearray(open(f, "rb").read())
    struct.pack_into("<I", b, 8, 10)
    if f.endswith(".prof"):
        struct.pack_into("<I", b, 16, 4096)
        records = b"".join(b[1024 + 208 * i:1024 + 208 * i + 64] for i in range(48))
        b = b[:1024] + records + bytes(4096 - 1024 - len(records)) + b[12288:]
    open(f, "wb").write(bytes(b))
PY
	"$MF_PRINT" --timeline "$old" > "$mf_work/old.tl" 2> "$mf_work/old.err"
	is "$?:$(cat "$mf_work/old.err")" "0:" "format 10: --timeline reads it"
	sed -E 's/  calls by entry point besides malloc$//; s/( [a-z_]+ [0-9]+)+$//; s/^.*malloc_freq\.[0-9]+ \(/DIR (/' \
		"$mf_work/tl" > "$mf_work/new.stripped"
	sed -E 's/^.*malloc_freq\.[0-9]+ \(/DIR (/' "$mf_work/old.tl" > "$mf_work/old.stripped"
	cmp -s "$mf_work/new.stripped" "$mf_work/old.stripped"
	ok $? "... its rows the same as format 11's, without the calls by entry point"
	"$MF_PRINT" --json "$old" 2> /dev/null | python3 -c 'import json, sys
t = json.load(sys.stdin)["processes"][0]["timeline"]; print(len(t["points"]), t["by_entry"])' > "$mf_work/old.json"
	like "$(cat "$mf_work/old.json")" "^[0-9]+ None\$" "... and --json's by_entry is null"
else
	skip "no python3 (it writes the format 10 profile)"
	skip "no python3 (it writes the format 10 profile)"
	skip "no python3 (it writes the format 10 profile)"
fi

# the header's pages after the first: a hole while the records fit in the first page (also
# in a snapshot's copy, taken while the thread runs), reserved once they do not
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_TIMELINE=$T MALLOC_FREQ_SNAPSHOT_INTERVAL=0.1 profile_within 60 "$MF_TESTS/prog_entries" \
	malloc:640:100:300 calloc:640:48:300 > /dev/null
d=$(ls -d "$mf_work"/malloc_freq.*)
f=$(ls "$d"/*.prof)
holey "$f"
ok $? "a thread with few records: its header's pages after the first a hole ($(stat -c '%b blocks of %B, %s bytes' "$f"))"
snaps=$(ls "$d"/snap.*/*.prof 2> /dev/null | wc -l)
hole=0
for s in "$d"/snap.*/*.prof; do holey "$s" && hole=$((hole + 1)); done
is "$hole" "$snaps" "... and in each snapshot's copy of it ($snaps copies)"
[ "$snaps" -gt 0 ]; ok $? "... of which there are some"
"$MF_PRINT" --collapsed --snapshot 1 "$d" > /dev/null 2> "$mf_work/err"
is "$?:$(cat "$mf_work/err")" "0:" "... which read"
like "$("$MF_PRINT" --timeline "$d" 2> /dev/null | grep -c '^ *[0-9.]* s ')" "^[1-9]" "... as does the timeline"

rm -rf "$mf_work"/malloc_freq.*
set --
for i in $(seq 1 30); do set -- "$@" calloc:64:10:25; done
MALLOC_FREQ_TIMELINE=0.01 profile_within 60 "$MF_TESTS/prog_entries" "$@" > /dev/null
d=$(ls -d "$mf_work"/malloc_freq.*)
f=$(ls "$d"/*.prof)
n=$(od -An -tu4 -j136 -N4 "$f" | tr -d ' ')
[ "$n" -gt 14 ] && ! holey "$f"
ok $? "a thread with more records than the first page holds ($n): its header reserved whole"
"$MF_PRINT" --timeline "$d" > "$mf_work/tl" 2> /dev/null
is "$(awk '/^ +time +calls +calls\/s +requested +temporaries +calloc$/ { on = 1; next }
	on && $2 == "s" { s += $8 } END { print s + 0 }' "$mf_work/tl")" 1920 \
	"... its calloc column (a column of its own: it fits) sums to its 1920 calls"
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_TIMELINE=0.01 profile_within 60 "$MF_TESTS/prog_entries" "$@" fork > "$mf_work/out" \
	2> "$mf_work/err"
is "$?:$(cat "$mf_work/out"):$(cat "$mf_work/err"):$(ls -d "$mf_work"/malloc_freq.* | wc -l)" "0:ready::2" \
	"the same, then a fork: the reservation (made from the hot path) left no hold behind: the child is recorded, nothing said"
done_testing
