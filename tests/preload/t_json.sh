#!/bin/sh
# mf_print --json parsed by python3's json module: the schema's version and tables, totals equal
# to the text report's, every sample's stack and thread resolved, each site's calls and bytes
# those prog_outputs makes, an inlined frame marked and tied to its caller, per-thread and
# per-process totals equal to their samples', and a thread name with control characters kept
# exactly, in valid JSON.
. "$srcdir/tests/tap.sh"
command -v python3 > /dev/null 2>&1 || skip_all "no python3 (the JSON parser of this test)"
prog="$MF_TESTS/prog_outputs"
MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$prog" base || bail "prog_outputs failed"
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --json "$dir" > "$mf_work/j.json" 2> "$mf_work/err"
is "$?" 0 "--json exits 0"
calls=$("$MF_PRINT" "$dir" 2> /dev/null | head -1 | awk '{ print $2 }')
bytes=$("$MF_PRINT" --collapsed --bytes "$dir" 2> /dev/null | awk '{ s += $NF } END { printf "%.0f\n", s }')
id=$(readelf -n "$prog" | sed -n 's/.*Build ID: *//p')
# check: one TAP line per check, numbered by the shell's helpers
python3 - "$mf_work/j.json" "$calls" "$bytes" "$prog" "$id" > "$mf_work/checks" 2>&1 <<'PY'
import json, sys
path, calls, nbytes, prog, build_id = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
d = json.load(open(path, encoding="utf-8"))
def check(ok, desc): print(("ok" if ok else "not ok") + "\t" + desc)
check(d["format"] == "malloc_freq" and d["version"] == 2, "format malloc_freq, schema version 2")
check(d["metrics"] == ["calls", "bytes", "temporary"],
      "metrics: calls, bytes and temporaries (no time, no lifetimes: not recorded)")
s = d["samples"]
tot = {k: sum(x["values"][k] for x in s) for k in d["metrics"]}
check(tot["calls"] == calls == d["summary"]["total"]["calls"], "the samples' calls add up to the text report's %d" % calls)
check(tot["bytes"] == nbytes == d["summary"]["total"]["bytes"], "their bytes to --collapsed --bytes's %d" % nbytes)
check(sum(d["summary"]["by_entry"].values()) == calls, "by_entry adds up to the total")
fr, st, th, pr = d["frames"], d["stacks"], d["threads"], d["processes"]
check(all(f["id"] == i for i, f in enumerate(fr)) and all(x["id"] == i for i, x in enumerate(st)), "ids are indexes")
check(all(0 <= x["stack"] < len(st) and 0 <= x["thread"] < len(th) for x in s), "every sample's stack and thread exist")
check(all(fr[x["frames"][-1]]["kind"] == "entry" and fr[x["frames"][-1]]["function"] == x["entry"] for x in st),
      "every stack ends in its entry frame")
def caller(x):  # the function that called the allocator (inlined ones included)
    return fr[st[x["stack"]]["frames"][-2]]["function"]
by = {}
for x in s:
    c = by.setdefault(caller(x), [0, 0]); c[0] += x["values"]["calls"]; c[1] += x["values"]["bytes"]
want = {"site_main": [100, 1000], "alloc_inl": [200, 20000], "site_b": [300, 300000],
        "site_shared": [100, 800], "site_gone": [40, 640]}
got = {k: by.get(k) for k in want}
check(got == want, "each site's calls and bytes: %s" % got)
inl = [f for f in fr if f["function"] == "alloc_inl"]
check(len(inl) >= 1 and all(f["inlined"] and fr[f["inlined_into"]]["function"] == "site_a" for f in inl),
      "alloc_inl is inlined into site_a")
check(all(f["file"].endswith("prog_outputs.c") and f["line"] > 0 and f["offset"] > 0 for f in inl),
      "... with its file, line and offset")
mods = [m for m in d["modules"] if m["path"] == prog]
check(len(mods) == 1 and mods[0]["build_id"] == build_id, "the program's module with its build-id")
check(all(f["module"] is None or f["module"] < len(d["modules"]) for f in fr), "every frame's module exists")
names = {t["name"]: t["total"]["calls"] for t in th}
check(names.get("worker_a") == 250 and names.get("worker_b") == 350, "per thread: worker_a 250 calls, worker_b 350")
for t in th:
    t["_sum"] = sum(x["values"]["calls"] for x in s if th[x["thread"]] is t)
check(all(t["total"]["calls"] == t["_sum"] for t in th), "each thread's total is its samples'")
check(len(pr) == 1 and pr[0]["total"]["calls"] == calls and pr[0]["name"] == "prog_outputs" and pr[0]["end"] == "exit"
      and pr[0]["status"] == 0, "the process: prog_outputs, every call, exited 0")
PY
while IFS='	' read -r res desc; do
	if [ "$res" = ok ]; then pass "$desc"; else fail "$desc"; [ "$res" = "not ok" ] || echo "# $res $desc"; fi
done < "$mf_work/checks"

rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_tree" name 5 || bail "prog_tree name failed"
"$MF_PRINT" --json "$mf_work"/malloc_freq.* > "$mf_work/j.json" 2> /dev/null
got=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1], encoding="utf-8")); print(repr([t["name"] for t in d["threads"]]))' "$mf_work/j.json" 2>&1)
is "$got" "['\\x1b[31m\\nx']" "a thread name with an escape and a newline is valid JSON and kept exactly"

# A program without symbols (stripped): its frames have function null (README), with their
# module and offset; the text reports name them module+offset
# (the strip of the compiler's target: a cross compiler's, TARGET-strip, for TARGET-gcc)
case $CC in *-gcc) strip=${CC%gcc}strip ;; *) strip=strip ;; esac
if command -v "$strip" > /dev/null; then
	rm -rf "$mf_work"/malloc_freq.*
	cp "$MF_TESTS/prog_tree" "$mf_work/bare" && "$strip" --strip-all "$mf_work/bare"
	MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$mf_work/bare" alloc 10 0 || bail "bare failed"
	"$MF_PRINT" --json "$mf_work"/malloc_freq.* > "$mf_work/j.json" 2> /dev/null
	got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
mods = {m["id"]: m["path"] for m in d["modules"]}
bare = [f for f in d["frames"] if f["kind"] == "code" and mods.get(f["module"], "").endswith("/bare")]
print(len(bare) > 0 and all(f["function"] is None and f["offset"] > 0 for f in bare))' "$mf_work/j.json" 2>&1)
	is "$got" True "a stripped program's frames: function null, with their module and offset"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* 2> /dev/null > "$mf_work/c.txt"
	like "$(cat "$mf_work/c.txt")" ";bare\+0x[0-9a-f]+;" "... and --collapsed names them bare+0x..."
else
	skip "no $strip (binutils)"
fi
done_testing
