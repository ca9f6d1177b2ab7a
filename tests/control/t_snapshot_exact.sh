#!/bin/sh
# Snapshots of threads that allocate without pause are exact. Taken back to back by main while
# 4 threads call sites that each always ask for the same size (tests/progs/prog_snapshot.c, exact),
# and by the profiler's thread every 20 ms (busy): every snapshot has, at every site of every
# thread, bytes = calls x the site's size (no call half counted), and no thread's calls go
# down from one snapshot to the next.
. "$srcdir/tests/tap.sh"
command -v python3 > /dev/null || skip_all "python3 is not installed (it parses mf_print --json)"
# check NAME WORKER N HOLDING: snapshots 1 to N of the run in $mf_work, whose allocating
# threads run WORKER, at least HOLDING of them taken after they allocated; one line per snapshot in $mf_work/NAME: "N torn-samples threads-down checked-samples"
check() {
	dir=$(ls -d "$mf_work"/malloc_freq.*)
	i=1
	while [ $i -le $3 ]; do
		"$MF_PRINT" --json --snapshot $i "$dir" > "$mf_work/s$i.json" 2> "$mf_work/s$i.err" ||
			echo "# mf_print --snapshot $i: $(cat "$mf_work/s$i.err")"
		i=$((i + 1))
	done
	python3 - "$mf_work" "$2" $3 > "$mf_work/$1" 2>&1 << 'PY'
import json, sys
work, worker, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
size = {"site_p1": 16, "site_p2": 32, "site_p3": 64, "site_a": 8}
last = {}
started = False
for i in range(1, n + 1):
    # (an interval snapshot taken before any thread made its file, as under qemu-user's slow
    # start, holds nothing, and mf_print says so: it counts as a snapshot without the sites;
    # after one that held them it is an error)
    if "no thread had a file then" in open("%s/s%d.err" % (work, i), encoding="utf-8").read():
        if started:
            sys.exit("snapshot %d: no thread's file, after snapshots that had them" % i)
        print(i, 0, 0, 0)
        continue
    d = json.load(open("%s/s%d.json" % (work, i), encoding="utf-8"))
    names = {f["id"]: f["function"] for f in d["frames"]}
    tids = {t["id"]: t["tid"] for t in d["threads"]}
    torn = checked = 0
    calls = {}
    for s in d["samples"]:
        stack = [names[f] for f in d["stacks"][s["stack"]]["frames"]]
        site = [f for f in stack if f in size]
        if worker not in stack or len(site) != 1:
            continue
        c, b = s["values"]["calls"], s["values"]["bytes"]
        checked += 1
        torn += b != c * size[site[0]]
        tid = tids[s["thread"]]
        calls[tid] = calls.get(tid, 0) + c
    started = started or checked > 0
    down = sum(1 for tid, c in calls.items() if c < last.get(tid, 0))
    last.update(calls)
    print(i, torn, down, checked)
PY
	is "$?" 0 "$1: the snapshots parse as JSON" || sed 's/^/# /' "$mf_work/$1"
	[ "$(awk '$4 >= 1 { s++ } END { print s + 0 }' "$mf_work/$1")" -ge $4 ]
	ok $? "$1: at least $4 of the $3 snapshots hold the threads' sites"
	is "$(awk '{ s += $2 } END { print s + 0 }' "$mf_work/$1")" 0 \
		"$1: no site of any thread in any snapshot with bytes other than calls x its size (torn)"
	is "$(awk '{ s += $3 } END { print s + 0 }' "$mf_work/$1")" 0 \
		"$1: no thread's calls go down from one snapshot to the next"
}
n=${MF_SNAPSHOTS:-100}
out=$(profile_within 300 "$MF_TESTS/prog_snapshot" exact $n); rc=$?
is "$rc:$out" "0:snapshots $n" "exact $n: exits 0 after $n snapshots"
check main exact_worker $n $n

rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_SNAPSHOT_INTERVAL=0.02 profile_within 300 "$MF_TESTS/prog_snapshot" busy 1 > /dev/null
is "$?" 0 "busy 1 s, a snapshot every 20 ms: exits 0"
dir=$(ls -d "$mf_work"/malloc_freq.*)
k=$("$MF_PRINT" --list "$dir" 2> /dev/null | awk 'NR > 1 && /interval/ { k++ } END { print k + 0 }')
[ "$k" -ge 5 ]; ok $? "busy: at least 5 interval snapshots ($k)"
check interval busy $k 4
done_testing
