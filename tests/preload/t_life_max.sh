#!/bin/sh
# Each stack's most live at once and its blocks' mean lifetime, on tests/progs/prog_life_max.c (counts
# known by construction, lifetimes on): the max live column of the tree, --sort max-live's
# order, --json (read by python3) and --pprof (read by go tool pprof) agree with the program;
# site_slow's blocks, each freed after a sleep of T ms, have a mean lifetime of at least T (and
# within a generous bound); frees by another thread lower the live count its thread sees. The
# summary states the run's duration and calls per second, consistent with the calls (and that
# the duration is not known when a process has no end recorded), and the mean lifetime. A
# profile of format 7 (the record before these fields) still reads, the new columns left out
# and said so once.
. "$srcdir/tests/tap.sh"
K=20 S=1024 J=5 T=20 C=1000 H=50
MALLOC_FREQ_LIFETIMES=1 profile_within 120 "$MF_TESTS/prog_life_max" $K $S $J $T $C $H
is "$?" 0 "prog_life_max $K $S $J $T $C $H exits 0 with lifetimes"
d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"

# the most live at once, by site: blocks and bytes (--collapsed --weight counts each stack)
"$MF_PRINT" --collapsed --weight max-live-blocks $d > "$mf_work/mb" 2> "$mf_work/err"
is "$?" 0 "--collapsed --weight max-live-blocks exits 0"
"$MF_PRINT" --collapsed --weight max-live $d > "$mf_work/mbytes" 2> /dev/null
most() { echo "$(calls "$mf_work/mb" ";$1;[a-z_]*\$") $(calls "$mf_work/mbytes" ";$1;[a-z_]*\$")"; }
is "$(most site_rounds)" "$K $((K * S))" "site_rounds: at most $K blocks of $S bytes live at once"
is "$(most site_slow)" "1 8192" "site_slow: one block at a time"
is "$(most site_quick)" "1 64" "site_quick: each freed at once"
is "$(most site_handed)" "$H $((H * 32))" \
	"site_handed: $H, not $((2 * H)): the frees by another thread count before the next round"

# the tree: the columns, and the same figures on each site's line
"$MF_PRINT" -t 0 $d > "$mf_work/tree" 2> /dev/null
like "$(grep ' calls  *%  *bytes' "$mf_work/tree")" "max live \(bytes\)  mean life" \
	"the tree has the max live and mean life columns"
# line SITE: the tree's first line of SITE, from the max live column on
line() { grep -m1 "[|\`]- $1 " "$mf_work/tree" | sed 's/.*) *< *[0-9.]* [num]*s *//; s/.*) *- *//'; }
like "$(line site_rounds)" "^$K \(20.0 KiB\) " "site_rounds's line: $K (20.0 KiB)"
like "$(line site_slow)" "^1 \(8.0 KiB\) +[0-9.]+ (ms|s) " "site_slow's line: 1 (8.0 KiB), a mean life in ms"

# --sort max-live: the sites by their most live bytes; --sort calls: by their calls
order() { "$MF_PRINT" -t 0 "$@" $d 2> /dev/null | grep -o '^ .*[|`]- site_[a-z]*' | grep -o 'site_[a-z]*' | tr '\n' ' '; }
is "$(order --sort max-live)" "site_rounds site_slow site_handed site_quick " \
	"--sort max-live: site_rounds (20 KiB), site_slow (8 KiB), site_handed (1.6 KiB), site_quick (64 B)"
is "$(order --sort calls)" "site_quick site_rounds site_handed site_slow " \
	"--sort calls: site_quick ($C), site_rounds (110), site_handed ($((2 * H))), site_slow ($J)"

# the summary: duration, rate, mean lifetime
calls=$(head -1 "$mf_work/tree" | awk '{ print $2 }')
dur=$(sed -n 's/^  duration: \([0-9.]*\) s, .*/\1/p' "$mf_work/tree")
rate=$(sed -n 's/^  duration: .*; \([0-9.]*\) calls\/s$/\1/p' "$mf_work/tree")
awk -v d="$dur" -v r="$rate" -v c="$calls" -v t=$((J * T)) 'BEGIN {
	x = r * d / c; exit !(d > 0 && d * 1000 >= t && x > 0.95 && x < 1.05) }'
ok $? "the summary's duration ($dur s, at least $J x $T ms) times its rate ($rate calls/s) is its $calls calls, within 5%"
mkdir "$mf_work/noend" && cp -r $d "$mf_work/noend/" && e=$(ls -d "$mf_work"/noend/malloc_freq.*)
dd if=/dev/zero of="$e/process" bs=1 seek=64 count=8 conv=notrunc 2> /dev/null # (end_ns)
"$MF_PRINT" $e 2> /dev/null | grep '^  duration' > "$mf_work/noend.txt"
like "$(cat "$mf_work/noend.txt")" "^  duration not known: some process has no start or no end recorded" \
	"with the process's end gone from its record: the duration is not known, no rate"
leaked=$(sed -n 's/^  lifetimes: \([0-9]*\) blocks\{0,1\} .*/\1/p' "$mf_work/tree")
like "$(grep '^  mean lifetime: ' "$mf_work/tree")" "^  mean lifetime: [0-9.]+ [num]?s, of the $((calls - leaked)) blocks freed" \
	"the summary's mean lifetime, of every freed block (all but the $leaked leaked)"

if command -v python3 > /dev/null 2>&1; then
	"$MF_PRINT" --json $d > "$mf_work/j.json" 2> /dev/null
	python3 - "$mf_work/j.json" $K $S $J $T $H "$calls" > "$mf_work/checks" 2>&1 << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
K, S, J, T, H, calls = (int(x) for x in sys.argv[2:8])
def check(ok, desc): print(("ok" if ok else "not ok") + "\t" + desc)
new = ["max-live-blocks", "max-live", "freed", "lifetime"]
check(all(k in d["metrics"] for k in new), "metrics name %s" % new)
fr, st = d["frames"], d["stacks"]
by = {}
for x in d["samples"]:
    f = fr[st[x["stack"]]["frames"][-2]]["function"]
    s = by.setdefault(f, dict.fromkeys(new, 0))
    for k in new: s[k] += x["values"][k]
r, slow = by.get("site_rounds", {}), by.get("site_slow", {})
check(r.get("max-live-blocks") == K and r.get("max-live") == K * S, "site_rounds: %s" % r)
check(by.get("site_handed", {}).get("max-live-blocks") == H, "site_handed: %s" % by.get("site_handed"))
mean = slow["lifetime"] / slow["freed"] if slow.get("freed") else 0
check(slow.get("freed") == J and T * 1e6 <= mean < T * 1e6 * 20,
      "site_slow: %d freed, mean lifetime %.1f ms (at least %d ms)" % (slow.get("freed", 0), mean / 1e6, T))
tot = d["summary"]["total"]
check(all(tot[k] == sum(x["values"][k] for x in d["samples"]) for k in new), "the totals are the samples' sums")
dur = d["summary"]["duration_ns"]
check(isinstance(dur, int) and dur >= J * T * 1e6, "summary.duration_ns: %s, at least %d ms" % (dur, J * T))
PY
	ok $? "python3 reads the JSON"
	while IFS="	" read -r res desc; do [ "$res" = ok ]; ok $? "--json: $desc"; done < "$mf_work/checks"
else
	skip "no python3 (the JSON parser of these checks)"
fi
if command -v jq > /dev/null 2>&1; then
	n=$(awk '{ s += $NF } END { print s }' "$mf_work/mb")
	is "$(jq '.summary.total["max-live-blocks"]' "$mf_work/j.json" 2> /dev/null)" "$n" \
		"jq reads the total of max-live-blocks: --collapsed's ($n)"
	like "$(jq '.summary.duration_ns' "$mf_work/j.json" 2> /dev/null)" '^[1-9][0-9]+$' "jq reads duration_ns"
fi

if command -v go > /dev/null 2>&1 && go tool pprof -h > /dev/null 2>&1; then
	export PPROF_TMPDIR="$mf_work" HOME="$mf_work" GOCACHE="$mf_work/gocache"
	"$MF_PRINT" --pprof "$mf_work/p.pb.gz" $d > /dev/null 2>&1
	go tool pprof -top -sample_index=max_live_space -unit=B -nodecount=1000 -nodefraction=0 \
		"$mf_work/p.pb.gz" > "$mf_work/top" 2> /dev/null
	cum() { awk -v f="$2" '$6 == f { print $4; exit }' "$1"; }
	is "$(cum "$mf_work/top" site_rounds) $(cum "$mf_work/top" site_slow)" "$((K * S))B 8192B" \
		"pprof -sample_index=max_live_space: site_rounds $((K * S))B, site_slow 8192B"
	go tool pprof -raw "$mf_work/p.pb.gz" > "$mf_work/raw" 2> /dev/null
	like "$(grep -A1 '^Samples' "$mf_work/raw")" "max_live_objects/count max_live_space/bytes freed_objects/count lifetime/nanoseconds" \
		"pprof: the sample types with their units"
else
	skip "no go (go tool pprof): apt-get install golang-go"
fi

# format 7: the same profile as the last writer of that format left it (each leaf's life record
# 18 slots, not 19)
if command -v python3 > /dev/null 2>&1; then
	old="$mf_work/old/malloc_freq.1"
	mkdir -p "$old" && cp "$d"/* "$old"/
	python3 - "$old" << 'PY'
import glob, struct, sys
for f in glob.glob(sys.argv[1] + "/*.prof"):
    b = bytearray(open(f, "rb").read())
    n = struct.unpack_from("<Q", b, 56)[0]
    nodes, new, at, i = b[12288:12288 + 32 * n], [], {}, 1
    new.append(bytes(nodes[0:32]))
    while i < n:
        rel, parent, module, c, y = struct.unpack_from("<QIIQQ", nodes, 32 * i)
        at[i] = len(new)
        new.append(struct.pack("<QIIQQ", rel, at.get(parent, 0), module, c, y))
        slots = 2 + 19 if module == 0xffffffff else 17 if module == 0xfffffffa else 0
        keep = 2 + 18 if module == 0xffffffff else slots
        for k in range(keep):
            new.append(bytes(nodes[32 * (i + 1 + k):32 * (i + 2 + k)]))
        i += 1 + slots
    struct.pack_into("<III", b, 8, 7, 0x01020304, 4096)  # (a one-page header then)
    struct.pack_into("<Q", b, 56, len(new))
    open(f, "wb").write(bytes(b[:4096]) + b"".join(new))
for name in ("process", "modules"):
    b = bytearray(open(sys.argv[1] + "/" + name, "rb").read())
    struct.pack_into("<I", b, 8, 7)
    open(sys.argv[1] + "/" + name, "wb").write(bytes(b))
PY
	"$MF_PRINT" -t 0 "$old" > "$mf_work/old.txt" 2> "$mf_work/old.err"
	is "$?" 0 "a profile of format 7 reads"
	is "$(grep -c 'format 7 or older' "$mf_work/old.txt")" 1 \
		"... its summary says once that its files lack the maximums and lifetime sums"
	is "$(grep -c 'max live (bytes)\|^  mean lifetime' "$mf_work/old.txt")" 0 "... and shows no max live column, no mean lifetime"
	like "$(grep -m1 '[|`]- site_rounds ' "$mf_work/old.txt")" "^ +110 .* $K \(20.0 KiB\) +< " \
		"... its other lifetime columns as before (site_rounds: 110 calls, $K at the peak)"
	"$MF_PRINT" --sort max-live "$old" > /dev/null 2> "$mf_work/old.err"; rc=$?
	like "$rc $(cat "$mf_work/old.err")" "^1 mf_print: max-live: [0-9]+ of these profiles' thread files \(format 7 or older\)" \
		"--sort max-live on it: an error that says why, exit 1"
	"$MF_PRINT" --json "$old" 2> /dev/null | python3 -c 'import json, sys; d = json.load(sys.stdin)
sys.exit("max-live" in d["metrics"] or "max-live" in d["summary"]["total"])'
	ok $? "... --json has no max-live metric for it (not a zero)"
else
	skip "no python3 (it writes the format 7 profile)"
fi
done_testing
