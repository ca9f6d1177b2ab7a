#!/bin/sh
# Snapshots of threads that allocate without pause are exact: taken back to back by main while
# 4 threads call sites that each always ask for the same size (tests/prog_snapshot.c, exact),
# every snapshot has, at every site of every thread, bytes = calls x the site's size (no call
# half counted), and no thread's calls go down from one snapshot to the next.
. "$srcdir/tests/tap.sh"
command -v python3 > /dev/null || skip_all "python3 is not installed (it parses mf_print --json)"
n=${MF_SNAPSHOTS:-100}
out=$(profile_within 300 "$MF_TESTS/prog_snapshot" exact $n); rc=$?
is "$rc:$out" "0:snapshots $n" "exact $n: exits 0 after $n snapshots"
dir=$(ls -d "$mf_work"/malloc_freq.*)
i=1
while [ $i -le $n ]; do
	"$MF_PRINT" --json --snapshot $i "$dir" > "$mf_work/s$i.json" 2> "$mf_work/s$i.err" ||
		echo "# mf_print --snapshot $i: $(cat "$mf_work/s$i.err")"
	i=$((i + 1))
done
# one line per snapshot: "N torn-samples threads-down checked-samples"
python3 - "$mf_work" $n > "$mf_work/check" 2>&1 << 'PY'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
size = {"site_p1": 16, "site_p2": 32, "site_p3": 64, "site_a": 8}
last = {}
for i in range(1, n + 1):
    d = json.load(open("%s/s%d.json" % (work, i), encoding="utf-8"))
    names = [f["function"] if "function" in f else f.get("name") for f in d["frames"]]
    tids = {t["id"]: t["tid"] for t in d["threads"]}
    torn = checked = down = 0
    calls = {}
    for s in d["samples"]:
        stack = [names[f] for f in d["stacks"][s["stack"]]["frames"]]
        site = [f for f in stack if f in size]
        if "exact_worker" not in stack or len(site) != 1:
            continue
        c, b = s["values"]["calls"], s["values"]["bytes"]
        checked += 1
        torn += b != c * size[site[0]]
        tid = tids[s["thread"]]
        calls[tid] = calls.get(tid, 0) + c
    down = sum(1 for tid, c in calls.items() if c < last.get(tid, 0))
    last.update(calls)
    print(i, torn, down, checked)
PY
is "$?" 0 "the snapshots parse as JSON" || sed 's/^/# /' "$mf_work/check"
is "$(awk '$4 >= 1 { s++ } END { print s + 0 }' "$mf_work/check")" $n \
	"every snapshot holds the threads' sites"
is "$(awk '{ s += $2 } END { print s + 0 }' "$mf_work/check")" 0 \
	"no site of any thread in any snapshot with bytes other than calls x its size (torn)"
is "$(awk '{ s += $3 } END { print s + 0 }' "$mf_work/check")" 0 \
	"no thread's calls go down from one snapshot to the next"
done_testing
