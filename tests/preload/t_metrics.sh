#!/bin/sh
# Every metric a profile holds in the machine outputs: prog_life recorded with lifetimes and
# time, then --pprof read by go tool pprof (a sample type per metric, each total the text
# report's), --json read by python3 (each site's temporaries, leaks and peak as prog_life makes
# them), --dot rendered by dot (each box with every metric), --html driven in Chromium (the
# metric switch lists them all, each total the text report's, max-live in bytes and lifetime
# in time); a profile without lifetimes carries no leak or peak metric.
. "$srcdir/tests/tap.sh"
N=1000 M=300 Z=200 K=50 R=8 T=4 Q=500 U=77 P=32
MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_WEIGHT=time profile "$MF_TESTS/prog_life" $N $M $Z $K $Q $U $P
is "$?" 0 "prog_life runs with MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_WEIGHT=time"
d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
metrics="calls bytes time temporary leaked-blocks leaked peak-blocks peak max-live-blocks max-live freed lifetime"
# total METRIC: the text report's total of a metric (its --collapsed column, summed)
total() { "$MF_PRINT" --collapsed --weight "$1" "$d" 2> /dev/null | awk '{ s += $NF } END { printf "%.0f\n", s }'; }
want=""
for k in $metrics; do want="$want $k=$(total $k)"; done
like "$want" " leaked-blocks=[1-9][0-9]* leaked=[1-9][0-9]* peak-blocks=[1-9][0-9]* peak=[1-9]" \
	"the text report's totals:$want"

# --threads --sort METRIC: the table is headed by that metric (it said "Calls per thread" over
# leaked bytes and nanoseconds)
heads=""
for k in $metrics; do
	"$MF_PRINT" --threads --sort $k --threshold 0 "$d" > "$mf_work/th" 2> /dev/null
	heads="$heads$(grep -o '^[A-Z][a-zA-Z() -]* per thread' "$mf_work/th");"
done
is "$heads" "Calls per thread;Bytes per thread;CPU time (ns) per thread;Temporaries per thread;Leaked blocks per thread;Leaked bytes per thread;Blocks live at the peak per thread;Bytes live at the peak per thread;Max live blocks per thread;Max live bytes per thread;Blocks freed at a known time per thread;Nanoseconds lived per thread;" \
	"--threads --sort METRIC: headed by the metric it shows"

# --pprof: a sample type per metric, -sample_index=TYPE totals the text report's
if ! command -v go > /dev/null 2>&1 || ! go tool pprof -h > /dev/null 2>&1; then
	for i in 1 2 3 4; do skip "no go tool pprof (apt-get install golang-go)"; done
else
	export PPROF_TMPDIR="$mf_work" HOME="$mf_work" GOCACHE="$mf_work/gocache"
	"$MF_PRINT" --pprof "$mf_work/life.pb.gz" "$d" > /dev/null 2>&1
	is "$?" 0 "--pprof of a profile with lifetimes and time"
	types=$(go tool pprof -raw "$mf_work/life.pb.gz" 2> /dev/null | sed -n '/^Samples:/{n;p;q}' | sed 's/\[dflt\]//')
	is "$types" "alloc_calls/count alloc_space/bytes cpu/nanoseconds temporaries/count leaked_objects/count leaked_space/bytes peak_objects/count peak_space/bytes max_live_objects/count max_live_space/bytes freed_objects/count lifetime/nanoseconds" \
		"a sample type per metric, in units pprof knows"
	got="" seen=""
	for tk in alloc_calls:calls alloc_space:bytes cpu:time temporaries:temporary \
		leaked_objects:leaked-blocks leaked_space:leaked peak_objects:peak-blocks peak_space:peak \
		max_live_objects:max-live-blocks max_live_space:max-live freed_objects:freed lifetime:lifetime; do
		t=${tk%%:*} k=${tk#*:}
		case $t in *_space) unit=-unit=B ;; cpu | lifetime) unit=-unit=ns ;; *) unit= ;; esac
		n=$(go tool pprof -top -nodecount=1 $unit -sample_index=$t "$mf_work/life.pb.gz" 2> /dev/null |
			sed -n 's/.*Total samples = \([0-9]*\).*/\1/p')
		got="$got $k=$n"
	done
	is "$got" "$want" "-sample_index=TYPE: each type's total is the text report's"
	go tool pprof -top -nodecount=1000 -nodefraction=0 -sample_index=leaked_objects "$mf_work/life.pb.gz" > "$mf_work/top" 2> /dev/null
	cum() { awk -v f="$1" '$6 == f { print $4; exit }' "$mf_work/top"; }
	is "$(cum site_kept) $(cum site_grow) $(cum site_temp)" "$((T * (M + 1))) $((T * K)) " \
		"-sample_index=leaked_objects: site_kept's and site_grow's leaks, none of site_temp's"
fi

# --json: the metrics, and each site's figures as prog_life makes them
"$MF_PRINT" --json "$d" > "$mf_work/life.json" 2> /dev/null
is "$?" 0 "--json of a profile with lifetimes and time"
if ! command -v python3 > /dev/null 2>&1; then
	skip "no python3 to read the JSON"
else
	python3 - "$mf_work/life.json" "$want" $T $N $M $K $R $P > "$mf_work/checks" 2>&1 <<'PY'
import json, sys
path, want = sys.argv[1], dict(kv.split("=") for kv in sys.argv[2].split())
T, N, M, K, R, P = map(int, sys.argv[3:])
d = json.load(open(path, encoding="utf-8"))
def check(ok, desc): print(("ok" if ok else "not ok") + "\t" + desc)
check(d["version"] == 2, "schema version 2")
check(d["metrics"] == list(want), "metrics: %s" % " ".join(d["metrics"]))
tot = {k: sum(x["values"][k] for x in d["samples"]) for k in d["metrics"]}
check(all(tot[k] == int(want[k]) == d["summary"]["total"][k] for k in want),
      "every metric's samples and summary total are the text report's")
check(all(sum(t["total"][k] for t in d["threads"]) == tot[k] for k in want), "and the threads' totals add up to it")
fr, st = d["frames"], d["stacks"]
def site(name, k):  # what the samples of stacks through function name add up to
    return sum(x["values"][k] for x in d["samples"]
               if any(fr[f]["function"] == name for f in st[x["stack"]]["frames"]))
figures = [("site_temp", "temporary", T * N), ("site_kept", "temporary", 0),
           ("site_grow", "temporary", T * K * (R - 1)),
           ("site_kept", "leaked-blocks", T * (M + 1)), ("site_kept", "leaked", T * (M + 1) * 100),
           ("site_grow", "leaked-blocks", T * K), ("site_grow", "leaked", T * K * 2048),
           ("site_temp", "leaked-blocks", 0), ("site_queue", "leaked", 0),
           ("site_peak", "peak-blocks", T * P), ("site_peak", "peak", T * P * 65536),
           ("site_kept", "peak", T * (M + 1) * 100), ("site_temp", "peak", 0)]
got = [(s, k, site(s, k)) for s, k, _ in figures]
check(got == figures, "each site's temporaries, leaks and peak: %s" % got)
PY
	while IFS='	' read -r res desc; do
		if [ "$res" = ok ]; then pass "$desc"; else fail "$desc"; [ "$res" = "not ok" ] || echo "# $res $desc"; fi
	done < "$mf_work/checks"
fi

# --dot: every box with every metric, dot renders it
"$MF_PRINT" --dot -t 0 "$d" > "$mf_work/life.dot" 2> /dev/null
is "$?" 0 "--dot of a profile with lifetimes and time"
label=$(sed -n 's/^  n[0-9]* \[label="site_kept\\n\([^"]*\)".*/\1/p' "$mf_work/life.dot" | sed 's/\\n/|/g')
like "$label" "^self: [0-9]+ calls \([0-9.]+%\), [^|]+\|time: [^|]+\|temporary: 0\|leaked-blocks: $((T * (M + 1)))\|leaked: 117\.6 KiB\|peak-blocks: $((T * (M + 1)))\|peak: 117\.6 KiB\|max-live-blocks: $((T * (M + 1)))\|max-live: 117\.6 KiB\|freed: 0\|lifetime: 0 ns\|total: " \
	"site_kept's box: time, no temporary, its $((T * (M + 1))) leaked blocks of 100 bytes, the same at the peak and at most, none freed"
if command -v dot > /dev/null 2>&1; then
	dot -Tsvg "$mf_work/life.dot" > "$mf_work/life.svg" 2> "$mf_work/dot.err"
	is "$? $(cat "$mf_work/dot.err")" "0 " "dot -Tsvg renders it without a word"
else
	skip "no dot (apt-get install graphviz)"
fi
"$MF_PRINT" --dot --sort leaked -t 0 "$d" > "$mf_work/leaked.dot" 2> /dev/null
like "$(grep -c -- '->' "$mf_work/leaked.dot") $(grep -- '->' "$mf_work/leaked.dot" | grep -vc 'label="[0-9.]* [KM]\{0,1\}i\{0,1\}B"')" "^[1-9][0-9]* 0$" \
	"--dot --sort leaked: edges only where bytes leaked, labelled in bytes"

# --html: the metric switch lists every metric, each total the text report's
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$chromium" ] || ! command -v node > /dev/null; then
	for i in 1 2 3 4; do skip "no chromium and node to drive the page (apt-get install chromium nodejs)"; done
else
	"$MF_PRINT" --html "$mf_work/life.html" "$d" 2> /dev/null
	node "$srcdir/tests/progs/html_check.js" "$chromium" "$mf_work/life.html" "$mf_work/life.png" site_kept \
		> "$mf_work/seen" 2>&1; ok $? "chromium loads and drives the page"
	totals=$(sed -n 's/^totals=//p' "$mf_work/seen" | tr -d '{}"' | tr ',:' ' =')
	is " $totals" "$want" "the metric switch lists every metric, each total the text report's"
	like "$(sed -n 's/^first_max-live=//p' "$mf_work/seen")" '^[0-9.]+ (B|KiB|MiB)\|' \
		"max-live in the page's table: bytes, as the text report shows them"
	like "$(sed -n 's/^first_lifetime=//p' "$mf_work/seen")" '^[0-9.]+ (ns|us|ms|s)\|' \
		"lifetime in the page's table: a time, not a count of nanoseconds"
fi

# Without lifetimes: no leak or peak metric anywhere.
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_life" 100 30 20 5 > /dev/null; is "$?" 0 "prog_life runs without lifetimes"
d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
like "$("$MF_PRINT" --json "$d" 2> /dev/null | sed -n 's/^  "metrics": \(.*\),$/\1/p')" '^\["calls", "bytes", "temporary"\]$' \
	"--json: calls, bytes, temporaries"
"$MF_PRINT" --dot "$d" > "$mf_work/none.dot" 2> /dev/null
if ! grep -q 'temporary: ' "$mf_work/none.dot" || grep -q 'leaked\|peak' "$mf_work/none.dot"; then
	fail "--dot: temporaries, no leak or peak line"
else
	pass "--dot: temporaries, no leak or peak line"
fi
if command -v go > /dev/null 2>&1 && go tool pprof -h > /dev/null 2>&1; then
	"$MF_PRINT" --pprof "$mf_work/none.pb.gz" "$d" > /dev/null 2>&1
	is "$(go tool pprof -raw "$mf_work/none.pb.gz" 2> /dev/null | sed -n '/^Samples:/{n;p;q}' | sed 's/\[dflt\]//')" \
		"alloc_calls/count alloc_space/bytes temporaries/count" "--pprof: no leak or peak sample type"
else
	skip "no go tool pprof"
fi
done_testing
