# Compares a DHAT profile (dhat.json, and the valgrind log of that run, made with -v
# --trace-symtab=yes: where it loaded each module) with mf_print --json of the same program
# profiled with MALLOC_FREQ_LIFETIMES=1, program point by program point.
# Usage: python3 dhat_compare.py DHAT_JSON VALGRIND_LOG OURS_JSON
# A program point is its call stack below the allocation function, each frame a module (the
# file's real name) and the return address's offset from the module's load bias, innermost
# first, ending at __libc_start_call_main (before glibc 2.34 __libc_start_main: DHAT's "(below
# main)"; where it stops unwinding);
# the inlined frames both tools add at one address count once. Prints "name value..." lines
# (see tests/preload/t_dhat_real.sh): blocks allocated, at the peak and at the end per point,
# then max live (DHAT's mbk and mb) and lifetimes (tl) on the points that agree in blocks; then
# up to 10 unexplained differences as "# ..." lines and examples of max live as "# max ...".
import collections
import json
import os
import re
import sys

dhat_json, vg_log, ours_json = sys.argv[1:4]


def module_name(path):
    return os.path.basename(os.path.realpath(path))


# DHAT: where valgrind put each module ("Reading syms from", its rx mapping, its bias)
mods, cur, rx = [], None, None
for line in open(vg_log, errors="replace"):
    m = re.search(r"Reading syms from (\S+)", line)
    if m:
        cur, rx = module_name(m.group(1)), None
        continue
    m = re.match(r"rx_map:\s+avma (0x[0-9a-f]+)\s+size (\d+)", line)
    if m and cur and rx is None:
        rx = (int(m.group(1), 16), int(m.group(2)))
    m = re.search(r"acquired as rx, bias (0x[0-9a-f]+)", line)
    if m and cur and rx:
        mods.append((rx[0], rx[0] + rx[1], int(m.group(1), 16), cur))
        cur = None

d = json.load(open(dhat_json))
if d.get("dhatFileVersion") == 1:  # (Valgrind before 3.17: aps, and fbk, tli for ebk, tl)
    d["pps"] = [dict(pp, ebk=pp["fbk"], tl=pp["tli"]) for pp in d["aps"]]
ftbl = d["ftbl"]
unmapped = 0


def dhat_frame(i):
    global unmapped
    a = int(ftbl[i].split(":")[0], 16)
    for lo, hi, bias, name in mods:
        if lo <= a < hi:
            return (name, a + 1 - bias)  # (valgrind keeps the call's address: return - 1)
    unmapped += 1
    return ("?", a)


# per key: [blocks, at t-gmax, at t-end, bytes at t-gmax, bytes, max blocks, max bytes, total
# lifetime, blocks whose lifetime it sums]; and its innermost function. (DHAT's lifetime is in
# instructions and counts every block, those live at the end until the end; ours is in ns and
# counts the blocks freed.)
FIELDS = 9
D = collections.defaultdict(lambda: [0] * FIELDS)
inner = {}
for pp in d["pps"]:
    k = []
    for f in (dhat_frame(i) for i in pp["fs"][1:]):  # ([0]: the allocation function)
        if not f[0].startswith("vgpreload_") and (not k or k[-1] != f):
            k.append(f)
    v = D[tuple(k)]
    for i, name in enumerate(("tbk", "gbk", "ebk", "gb", "tb", "mbk", "mb", "tl", "tbk")):
        v[i] += pp[name]
    inner[tuple(k)] = " ".join(ftbl[i].split(" ")[1] for i in pp["fs"][1:4])

o = json.load(open(ours_json))
frames, modules, stacks = o["frames"], o["modules"], o["stacks"]
O = collections.defaultdict(lambda: [0] * FIELDS)
samples = collections.Counter()
entry = {}
for s in o["samples"]:
    k, first = [], []
    for f in reversed(stacks[s["stack"]]["frames"]):
        x = frames[f]
        if x["kind"] == "entry":
            continue
        key = (module_name(modules[x["module"]]["path"]) if x["module"] is not None
               else x["kind"], x["offset"])
        if not k or k[-1] != key:
            k.append(key)
        if len(k) <= 3:
            first.append(x["function"] or "???")
        # (glibc before 2.34 calls main from __libc_start_main itself)
        if x["function"] in ("__libc_start_call_main", "__libc_start_main"):
            break
    k = tuple(k)
    inner[k] = inner.get(k, "") + " " + " ".join(first)  # (each tool names some)
    entry[k] = stacks[s["stack"]]["entry"]
    v, val = O[k], s["values"]
    samples[k] += 1
    for i, name in enumerate(("calls", "peak-blocks", "leaked-blocks", "peak", "bytes",
                              "max-live-blocks", "max-live", "lifetime", "freed")):
        v[i] += val[name]


zero = [0] * FIELDS
classes = collections.Counter()
klass = {}
sums = {c: [[0] * 5, [0] * 5] for c in ("realloc", "window", "dlerror")}
window_abs = 0
sizes = [0, 0]
other = []
for k in set(D) | set(O):
    a, b = D.get(k, zero), O.get(k, zero)
    if a[:3] == b[:3]:
        c = "agree"
        if a[4] != b[4]:  # the same blocks, of other sizes: by whole int digits?
            sizes[0] += 1
            sizes[1] += abs(a[4] - b[4]) % 4 != 0 or abs(a[4] - b[4]) > 4 * a[0]
    elif b[0] and (entry.get(k) in ("realloc", "reallocarray") or a[0] > b[0]):
        # DHAT charges a block realloc moves or resizes to the program point that first
        # allocated it (and counts the realloc as one more block there); we charge the new
        # block to the realloc's own stack: a realloc's stack, or a first allocation's
        # (which DHAT then has more blocks for)
        c = "realloc"
    elif a[0] == b[0] and a[2] == b[2]:
        # only the blocks at the peak differ: the moment each took its peak (see the test)
        c = "window"
        window_abs += abs(a[3] - b[3])
    elif a[0] == b[0] + 1 and (inner.get(k) or "").startswith("_dlerror_run "):
        # glibc before 2.34: libdl's buffer for dlerror, one a thread, made by the thread's
        # first dlopen or dlsym: in the main thread the profiler's own at its start
        c = "dlerror"
    else:
        c = "other"
        other.append((k, a, b))
    classes[c] += 1
    klass[k] = c
    if c in sums:
        for i in range(5):
            sums[c][0][i] += a[i]
            sums[c][1][i] += b[i]

tot = [[sum(v[i] for v in X.values()) for i in range(5)] for X in (D, O)]
print("dhat_totals", *tot[0][:3])
print("ours_totals", *tot[1][:3])
print("peak_bytes", tot[0][3], tot[1][3])
print("keys", len(set(D) | set(O)), "agree", classes["agree"], "realloc", classes["realloc"],
      "window", classes["window"], "other", classes["other"], "dlerror", classes["dlerror"])
# where realloc moved blocks: DHAT's counts are ours, moved between those program points
print("realloc_sums", *sums["realloc"][0][:3], "/", *sums["realloc"][1][:3])
# the peak window: DHAT's bytes at the peak minus ours there, and the changes both ways
print("window_bytes", sums["window"][0][3] - sums["window"][1][3], window_abs)
# dlerror's buffers: DHAT's blocks, at the peak and the end, minus ours
print("dlerror_net", *(sums["dlerror"][0][i] - sums["dlerror"][1][i] for i in range(3)))
# points whose blocks agree but not their sizes, and how many of them differ by other than
# an int's 30-bit digits (4 bytes; at most one a block)
print("sizes", *sizes)
print("unmapped_frames", unmapped)
for k, a, b in other[:10]:
    print("# dhat", a[:3], "ours", b[:3], "at", inner.get(k), k[:4])


# Max live per point: DHAT's mbk and mb against our max-live-blocks and max-live, on the points
# that agree in blocks (allocated, at the peak, at the end) and are one stack of ours. DHAT
# (3.15 and later) sets a point's mb and mbk only when one of its allocations takes the
# process's live bytes to a high (>= every one before): its "max" is the point's live bytes
# and blocks then, at most the point's own maximum, which is ours. So DHAT's never exceeds
# ours, and equals it where the point's maximum fell on such a high.
mx = collections.Counter()
mx_examples = []
for k, c in klass.items():
    if c != "agree" or samples[k] != 1:
        continue
    a, b = D[k], O[k]
    blocks, nbytes = (a[5] > b[5]) - (a[5] < b[5]), (a[6] > b[6]) - (a[6] < b[6])
    if blocks == 0 and nbytes == 0:
        mx["equal"] += 1
    elif blocks <= 0 and nbytes <= 0:
        mx["dhat_lower"] += 1
        mx["dhat_zero"] += a[6] == 0
        if len(mx_examples) < 3 and a[6]:
            mx_examples.append(("lower", a[5:7], b[5:7], inner.get(k), k[:3]))
    else:
        mx["dhat_higher"] += 1
        mx_examples.append(("higher", a[5:7], b[5:7], inner.get(k), k[:3]))
    mx["blocks_equal"] += blocks == 0
    mx["bytes_equal"] += nbytes == 0
print("max_live", classes["agree"], "one_stack", sum(mx[x] for x in ("equal", "dhat_lower",
      "dhat_higher")), "equal", mx["equal"], "dhat_lower", mx["dhat_lower"], "of_them_zero",
      mx["dhat_zero"], "dhat_higher", mx["dhat_higher"], "blocks_equal", mx["blocks_equal"],
      "bytes_equal", mx["bytes_equal"])


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2  # (ties: their mean rank)
        i = j + 1
    return r


def spearman(xs, ys):
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx_, my = sum(rx) / n, sum(ry) / n
    cov = sum((x - mx_) * (y - my) for x, y in zip(rx, ry))
    vx = sum((x - mx_) ** 2 for x in rx) ** 0.5
    vy = sum((y - my) ** 2 for y in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else 0.0


# Lifetimes per point, on the points that agree in blocks, are one stack of ours, and whose
# every block was freed (DHAT's tl then covers the blocks ours covers): DHAT's instructions
# and our nanoseconds are other units, so their rank orders (Spearman's coefficient) and each
# point's share of the total lifetime of these points (half the sum of the share's differences:
# 0 the same shares, 1 none in common), of total and of mean lifetime (total / blocks); and
# of the 10 points with the most total lifetime in DHAT, how many are in our 10.
pts = [k for k, c in klass.items() if c == "agree" and samples[k] == 1 and D[k][2] == 0
       and O[k][2] == 0 and O[k][8] == O[k][0] and D[k][0]]
if len(pts) >= 2:
    dt, ot = [D[k][7] for k in pts], [O[k][7] for k in pts]
    dm, om = [D[k][7] / D[k][0] for k in pts], [O[k][7] / O[k][8] for k in pts]
    sd, so = sum(dt) or 1, sum(ot) or 1
    tvd = sum(abs(x / sd - y / so) for x, y in zip(dt, ot)) / 2
    top = set(sorted(pts, key=lambda k: -D[k][7])[:10]) & set(sorted(pts, key=lambda k: -O[k][7])[:10])
    # how far each point's ns per instruction is from the median point's: within 2x
    ratio = sorted((O[k][7] / O[k][8]) / max(D[k][7] / D[k][0], 1) for k in pts)
    med = ratio[len(ratio) // 2] or 1
    within2 = sum(1 for k in pts
                  if 0.5 <= (O[k][7] / O[k][8]) / max(D[k][7] / D[k][0], 1) / med <= 2)
    print("lifetime", len(pts), "total_rank %.3f" % spearman(dt, ot), "mean_rank %.3f" %
          spearman(dm, om), "total_share_distance %.3f" % tvd, "top10", len(top),
          "mean_within_2x", within2, "ns_per_instr %.3f" % med)
else:
    print("lifetime", len(pts), "total_rank 0 mean_rank 0 total_share_distance 1 top10 0 "
          "mean_within_2x 0 ns_per_instr 0")
for e in mx_examples[:6]:
    print("# max %s: dhat mbk/mb %s ours %s at %s %s" % e)
