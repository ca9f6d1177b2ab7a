#!/bin/sh
# Lifetimes with sampling (MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_SAMPLE=N), on
# tests/progs/prog_life_sample.c, whose every figure is known by construction: exact with N = 1; with
# N = 4, each stack's calls, bytes, leaked, at-peak and freed blocks within 5% of the truth for
# every stack holding at least 1% of the peak (site_small holds 1.1%).
# Why 5% cannot fail by chance: each call is sampled with probability 1/N, independently, so a
# stack's estimate is N x Binomial(n, 1/N), of relative standard deviation sqrt((N - 1) / n);
# with n = 4 x 12000 blocks and N = 4 that is 0.79%, and 5% is 6.3 of them: a normal tail
# of 2.6e-10 per figure (n/N = 12000 samples: the binomial is that normal to well within its
# tails), under 1e-8 for the 36 figures checked. The at-peak figures are taken when the
# first free after the peak brings the thread's live-bytes change to a batch (64 KiB / N):
# thread 0 may have freed up to two batches of site_big's (43 sampled blocks, 0.36%) by then.
# Then mf_print --short-lived: each stack's blocks freed within the threshold, rounded to a
# power of two ns, are those of its lifetime histogram's buckets below it, with and without
# sampling; site_long's blocks (20 ms at least) are never short-lived, site_temp's (freed at
# once) are but for the few its thread was descheduled between malloc and free.
. "$srcdir/tests/tap.sh"
T=25000 B=12000 N=4
d="$mf_work"/malloc_freq.*

# weights: each --weight's collapsed lines into $mf_work/w.KEY
weights() {
	for k in calls bytes leaked-blocks leaked peak-blocks peak; do
		"$MF_PRINT" --collapsed --weight $k $d > "$mf_work/w.$k" || return 1
	done
	"$MF_PRINT" --histogram -t 0 $d > "$mf_work/hist"
}
# w KEY SITE: that weight of the stack through SITE
w() { calls "$mf_work/w.$1" ";$2;[a-z_]*\$"; }
# freed SITE: the blocks in the lifetime histogram of the stack through SITE
freed() {
	awk -v s="<- $1 " 'index($0, "<- ") && $1 ~ /^[0-9]+$/ { on = index($0, s) > 0; life = 0; next }
		on && /lifetimes of its freed blocks/ { life = 1; next }
		on && life && NF >= 3 { n += $(NF - 1) } END { printf "%.0f\n", n }' "$mf_work/hist"
}
# figures SITE SIZE CALLS LEAKED PEAK FREED: the site's figures, as "key=value ..."
figures() {
	echo "calls=$(w calls $1) bytes=$(w bytes $1) leaked-blocks=$(w leaked-blocks $1)" \
		"leaked=$(w leaked $1) peak-blocks=$(w peak-blocks $1) peak=$(w peak $1) freed=$(freed $1)"
}
truth() {
	echo "calls=$3 bytes=$(($3 * $2)) leaked-blocks=$4 leaked=$(($4 * $2)) peak-blocks=$5" \
		"peak=$(($5 * $2)) freed=$6"
}
# near GOT WANT: every figure of GOT within 5% of WANT's (exactly 0 where WANT's is 0)
near() {
	printf '%s\n%s\n' "$1" "$2" | awk 'NR == 1 { for (i = 1; i <= NF; i++) got[i] = $i; next }
		{ for (i = 1; i <= NF; i++) { split(got[i], g, "="); split($i, x, "=");
			if (x[2] == 0 ? g[2] != 0 : (g[2] - x[2] > 0.05 * x[2] || x[2] - g[2] > 0.05 * x[2])) bad = 1 } }
		END { exit bad }'
}

# Every call: exact.
t=1000 b=2000
MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_SAMPLE=1 profile "$MF_TESTS/prog_life_sample" $t $b; rc=$?
is "$rc" 0 "prog_life_sample runs with lifetimes and MALLOC_FREQ_SAMPLE=1"
weights; ok $? "mf_print reads it"
is "$(figures site_temp)" "$(truth site_temp 32 $((4 * t)) 0 0 $((4 * t)))" "site_temp, exact"
is "$(figures site_leak)" "$(truth site_leak 100 $((4 * b)) $((4 * b)) $((4 * b)) 0)" "site_leak, exact"
is "$(figures site_long)" "$(truth site_long 200 $((4 * b)) 0 $((4 * b)) $((4 * b)))" "site_long, exact"
is "$(figures site_small)" "$(truth site_small 12 $((4 * b)) 0 $((4 * b)) $((4 * b)))" "site_small, exact"
is "$(figures site_big)" "$(truth site_big 768 $((4 * b)) 0 $((4 * b)) $((4 * b)))" "site_big, exact"
is "$(figures site_edge)" "$(truth site_edge 65536 4 0 4 4)" "site_edge, exact"
like "$("$MF_PRINT" $d)" "; [0-9]+ frees? of (a )?blocks? never seen allocated" "not sampled: frees of unknown blocks are counted"

# --short-lived 5ms: rounded to 2^22 ns (4.2 ms)
# under SITE: the blocks of SITE's lifetime histogram in buckets below 2^22 ns
under() {
	awk -v s="<- $1 " 'index($0, "<- ") && $1 ~ /^[0-9]+$/ { on = index($0, s) > 0; life = 0; next }
		on && /lifetimes of its freed blocks/ { life = 1; next }
		on && life && NF >= 3 { hi = $0; sub(/\).*/, "", hi); sub(/.*, /, "", hi); split(hi, h, " ")
			ns = h[1] * (h[2] == "s" ? 1e9 : h[2] == "ms" ? 1e6 : h[2] == "us" ? 1e3 : 1)
			if (/< 1 ns/ || ns <= 4194304 * 1.05) n += $(NF - 1) }
		END { printf "%.0f\n", n }' "$mf_work/hist"
}
# shorts: each site's short-lived blocks and what its histogram holds below the bound
shorts() {
	"$MF_PRINT" --collapsed --weight short --short-lived 5ms $d > "$mf_work/w.short" || return 1
	for s in site_temp site_leak site_long site_small site_big site_edge; do
		printf '%s=%s/%s ' $s "$(w short $s)" "$(under $s)"
	done
}
got=$(shorts); ok $? "--collapsed --weight short --short-lived 5ms"
like "$got" "^site_temp=([0-9]+)/\1 site_leak=0/0 site_long=0/0 site_small=([0-9]+)/\2 site_big=([0-9]+)/\3 site_edge=([0-9]+)/\4 \$" \
	"each stack's short-lived blocks are its histogram's below 2^22 ns, none of site_long's: $got"
n=$(w short site_temp)
near "short=$n" "short=$((4 * t))"; ok $? "site_temp: $n of $((4 * t)) blocks short-lived (within 5%)"
like "$("$MF_PRINT" --short-lived 5ms $d)" "^  short-lived: [0-9]+ of the calls \([0-9.]+%\) had their block freed within 4\.2 ms \(--short-lived 5ms, rounded to a power of two ns: lifetimes under 2\^22 ns\)" \
	"the summary says the threshold as rounded"
like "$("$MF_PRINT" --short-lived 5ms -t 0 $d | sed -n '/call stack/p')" "temp +short +leaked blocks" "the tree gets a short column"
like "$("$MF_PRINT" --sort short --short-lived 5ms -t 5 $d | grep -m1 -- '- site_')" "site_temp " "--sort short: site_temp first"
"$MF_PRINT" --sort short $d > /dev/null 2> "$mf_work/err"; rc=$?
like "$rc $(cat "$mf_work/err")" "^2 mf_print: --sort short: give the threshold with --short-lived DURATION" "--sort short without --short-lived: usage error"
for bad in 0.5ns 5 5min -1ms 1e10s; do
	"$MF_PRINT" --short-lived $bad $d > /dev/null 2>&1; is $? 2 "--short-lived $bad: usage error"
done
# --json, read by python3: the metric short, each stack's the text report's
if command -v python3 > /dev/null 2>&1; then
	"$MF_PRINT" --json --short-lived 5ms $d > "$mf_work/short.json"
	got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
name = {f["id"]: f["function"] for f in d["frames"]}
by = {}
for s in d["samples"]:
    for f in d["stacks"][s["stack"]]["frames"]:
        if name.get(f, "").startswith("site_"):
            by[name[f]] = by.get(name[f], 0) + s["values"]["short"]
print("short" in d["metrics"], by.get("site_temp"), by.get("site_long", 0))' "$mf_work/short.json")
	is "$got" "True $(w short site_temp) 0" "--json: a metric short, site_temp's the text report's, site_long's 0"
else
	mf_n=$((mf_n + 1)); echo "ok $mf_n # SKIP no python3"
fi
if command -v go > /dev/null 2>&1 && go tool pprof -h > /dev/null 2>&1; then
	export PPROF_TMPDIR="$mf_work" HOME="$mf_work" GOCACHE="$mf_work/gocache"
	"$MF_PRINT" --pprof "$mf_work/short.pb.gz" --short-lived 5ms $d > /dev/null 2>&1
	n=$(go tool pprof -top -nodecount=1 -sample_index=short_lived "$mf_work/short.pb.gz" 2> /dev/null |
		sed -n 's/.*Total samples = \([0-9]*\).*/\1/p')
	is "$n" "$(awk '{ s += $NF } END { printf "%.0f", s }' "$mf_work/w.short")" "--pprof: a short_lived sample type, its total the text report's"
else
	mf_n=$((mf_n + 1)); echo "ok $mf_n # SKIP no go tool pprof"
fi

# Sampled: within 5%.
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_SAMPLE=$N profile "$MF_TESTS/prog_life_sample" $T $B; rc=$?
is "$rc" 0 "prog_life_sample runs with lifetimes and MALLOC_FREQ_SAMPLE=$N"
weights; ok $? "mf_print reads it"
peak=$((4 * B * (100 + 200 + 12 + 768) + 4 * 65536))
# sampled SITE SIZE CALLS LEAKED PEAK FREED
sampled() {
	got=$(figures $1) want=$(truth "$@")
	near "$got" "$want"; ok $? "$1 ($(($5 * $2 * 1000 / peak / 10)).$(($5 * $2 * 1000 / peak % 10))% of the peak), sampled, within 5%: $got (exact: $want)"
}
sampled site_temp 32 $((4 * T)) 0 0 $((4 * T))
sampled site_leak 100 $((4 * B)) $((4 * B)) $((4 * B)) 0
sampled site_long 200 $((4 * B)) 0 $((4 * B)) $((4 * B))
sampled site_small 12 $((4 * B)) 0 $((4 * B)) $((4 * B))
sampled site_big 768 $((4 * B)) 0 $((4 * B)) $((4 * B))
got=$(shorts); ok $? "sampled: --collapsed --weight short --short-lived 5ms"
like "$got" "^site_temp=([0-9]+)/\1 site_leak=0/0 site_long=0/0 site_small=([0-9]+)/\2 site_big=([0-9]+)/\3 site_edge=([0-9]+)/\4 \$" \
	"sampled: each stack's short-lived blocks are its histogram's below 2^22 ns: $got"
n=$(w short site_temp)
near "short=$n" "short=$((4 * T))"; ok $? "sampled: site_temp's short-lived blocks within 5%: $n (exact: at most $((4 * T)))"
summary=$("$MF_PRINT" $d)
like "$summary" "^  lifetimes: ~[0-9]+ blocks? \(~[0-9.]+ [KM]?i?B\) not freed at the end .*; frees of blocks never seen allocated are not known under sampling" \
	"the summary's lifetimes are estimates, and frees of unknown blocks not known"
like "$summary" "^  peak: ~[0-9.]+ MiB live in ~[0-9]+ blocks, .*
  \(sampled: the sampled blocks' most live bytes, times $N" "the summary says what the sampled peak is"
# The at-peak column's sum (with site_edge's, below 1%) is the peak's estimate.
all=$(awk '{ s += $NF } END { printf "%.0f", s }' "$mf_work/w.peak")
near "peak=$all" "peak=$peak"; ok $? "the at-peak bytes of all stacks within 5% of the peak: $all (exact: $peak)"

# A fork with sampled lifetimes: the child's filter starts empty with its map.
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_SAMPLE=3 profile "$MF_TESTS/prog_fork" 300 200 > /dev/null; rc=$?
is "$rc" 0 "prog_fork with sampled lifetimes exits 0"
"$MF_PRINT" $d > /dev/null 2>&1; ok $? "... and its profiles read"
done_testing
