#!/bin/sh
# --html's chart of calls per second over a run, read by headless Chromium
# (tests/progs/html_check.js), and mf_print --timeline's rows, on tests/progs/prog_burst.c: a
# busy thread whose records thin to every 80 ms or so, short threads recording at 20 ms, a
# burst of ten times the rate for a second. Each thread's calls are spread over its records'
# spans, bars no finer than the busy thread's records: the tallest bar is the burst's rate
# (within a third: a loaded machine delays the pace), none above it, the bars away from the
# burst, within the busy thread's run, the steady rate (but for a stall and its catch-up; where
# each of three runs fell behind its pace, a loaded machine, those checks skip, saying so);
# the time axis in seconds from
# "0 s"; the stacked chart's legend names the burst's two stacks (calloc, realloc, from one
# function) apart; the live bytes never drop below the 1 MiB an idle thread holds throughout
# (no thread's end reads as a fall). Its screenshot is kept as tests/progs/t_html_rates.png.
. "$srcdir/tests/tap.sh"
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
[ -n "$chromium" ] || skip_all "no chromium to read the page (apt-get install chromium)"
command -v node > /dev/null || skip_all "no node to drive chromium (apt-get install nodejs)"
command -v python3 > /dev/null || skip_all "no python3 to judge the bars"
RUN=4.5 AT=2.5 LEN=1 RATE=5000
# (a run whose busy thread fell behind its pace by more than 20 ms, on a loaded machine, is
# made again, at most three times in all, each said: its catch-up would read as a burst)
for try in 1 2 3; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_TIMELINE=0.02 profile_within 120 "$MF_TESTS/prog_burst" \
		$RUN $AT $LEN $RATE > "$mf_work/out"
	rc=$?
	lag=$(sed -n 's/^lag //p' "$mf_work/out")
	[ "$rc" = 0 ] && awk -v l="${lag:-1}" 'BEGIN { exit !(l <= 0.02) }' && break
	echo "# run $try: exit $rc, the busy thread fell ${lag:-?} s behind its pace: made again"
done
is "$rc" 0 "prog_burst: $RUN s, a burst of ten times $RATE calls/s at $AT s for $LEN s"
sed 's/^/# /' "$mf_work/out"
d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
"$MF_PRINT" --html "$mf_work/page.html" "$d" 2> "$mf_work/err"
is "$?:$(cat "$mf_work/err")" "0:" "--html writes the page, saying nothing"
node "$srcdir/tests/progs/html_check.js" "$chromium" "$mf_work/page.html" "$MF_TESTS/t_html_rates.png" \
	main "" function "0:-1" > "$mf_work/seen" 2>&1
ok $? "chromium loads the page"
seen() { sed -n "s/^$1=//p" "$mf_work/seen"; }
is "$(seen errors)" "[]" "no console error, no exception"
seen bars | sed 's/^/# bars: /'
seen stacked | sed 's/^/# stacked: /'
"$MF_PRINT" --timeline "$d" > "$mf_work/tl" 2> /dev/null
sed 's/^/# /' "$mf_work/tl"

# judge OUT SEEN PAGE TIMELINE: a line per check, "ok WHAT" or "not ok WHAT"
MF_RUN=$RUN python3 - "$mf_work/out" "$mf_work/seen" "$mf_work/page.html" "$mf_work/tl" > "$mf_work/judged" 2>&1 << 'PY'
import json, os, re, sys
out = dict((l.split()[0], l.split()[1:]) for l in open(sys.argv[1]))
seen = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[2]) if "=" in l)
at, end, burst = float(out["burst"][0]), float(out["burst"][1]), int(out["burst"][2])
short = int(out["short"][0]) / float(out["short"][1])
truth = burst / (end - at) + short          # calls/s in the burst, all threads
steady = float(out["steady"][0]) + short    # and away from it
TOL = 1 / 3
def check(cond, what):
    print(("ok " if cond else "not ok ") + what)
bars = json.loads(seen.get("bars", "null"))
if not bars:
    check(False, "the page's bars are readable (window.mf.bars)")
    sys.exit(0)
rates, bw = bars["rates"], bars["ns"] / 1e9
top = max(range(len(rates)), key=lambda b: rates[b])
check(abs(rates[top] - truth) <= TOL * truth,
      "the tallest bar reads the burst's rate: %.0f/s, the truth %.0f/s (within a third)" % (rates[top], truth))
check(all(r <= truth * (1 + TOL) for r in rates),
      "no bar above it by more than a third (the most: %.0f/s)" % max(rates))
check(top * bw < end + bw and (top + 1) * bw > at - bw,
      "the tallest bar (%.2f s to %.2f s) is in the burst (%.2f s to %.2f s), to a bar" % (top * bw, (top + 1) * bw, at, end))
# (away from the burst: a bar apart from it, not the first nor the last, which a thread's start
# and the run's end cut; two may miss, a stall of the pace on a loaded machine and its catch-up)
# (and within the busy thread's run, which ends RUN s after the process's start)
run, lag = float(os.environ["MF_RUN"]), float(out["lag"][0])
def away(rates, width):
    return [r for b, r in enumerate(rates[1:-1], 1)
            if ((b + 1) * width < at - width or b * width > end + width) and (b + 1) * width <= run]
def steady_check(rates, what):
    off = [round(r) for r in rates if abs(r - steady) > TOL * steady]
    what = "%s away from the burst read the steady rate %.0f/s, within a third (%d of them; off: %s)" % (what, steady, len(rates), off)
    if lag > 0.02 and not (len(rates) > 4 and len(off) <= 2):
        print("skip %s: the busy thread fell %.3f s behind its pace in each of three runs (a loaded machine)" % (what, lag))
    else:
        check(len(rates) > 4 and len(off) <= 2, what)
steady_check(away(rates, bw), "the bars")
check(bw >= 0.04, "a bar spans no less than the busy thread's records (%.3f s; they began at 0.02 s)" % bw)
said = re.search(r"a bar per ([0-9.]+) (m?s)", seen.get("chart_note", ""))
check(said is not None and abs(float(said.group(1)) / (1000 if said.group(2) == "ms" else 1) - bw) < 0.001 + bw * 0.05,
      "the chart says what a bar spans: %s" % (said.group(0) if said else seen.get("chart_note", "")))
check(bars["axis"][0] == "0 s" and all(a.endswith(" s") for a in bars["axis"]),
      "the time axis in seconds from \"0 s\": %s" % " ".join(bars["axis"]))
stacked = json.loads(seen.get("stacked", "null")) or {"series": []}
names = stacked["series"]
check(len(set(names)) == len(names), "the stacked chart's legend entries are distinct: %s" % " | ".join(names))
b = sorted(n for n in names if "site_burst" in n)
check(len(b) == 2 and b[0].startswith("calloc <- site_burst") and b[1].startswith("realloc <- site_burst"),
      "... the burst's two stacks named by their allocation function first: %s" % " | ".join(b))
check(all(n.count(" <- ") <= 3 for n in names), "... each of four names at most")
page = open(sys.argv[3]).read()
data = json.loads(re.search(r'<script id="mf-data" type="application/json">(.*?)</script>', page, re.S).group(1))
points = data["timelines"][0]["points"]
MiB = 1 << 20
held = [p for p in points if p[3] >= MiB]
first = points.index(held[0]) if held else len(points)
low = [p for p in points[first:] if p[3] < MiB]
check(held and not low, "the page's live bytes, once the idle thread's 1 MiB is live, never below it (%d points below)" % len(low))
rows = [l.split() for l in open(sys.argv[4]) if re.match(r"^ +[0-9.]+ s ", l)]
rr = [float(r[3]) for r in rows]
width = re.search(r"a row per ([0-9.]+) s", open(sys.argv[4]).read())
check(rr and abs(max(rr) - truth) <= TOL * truth and all(r <= truth * (1 + TOL) for r in rr),
      "--timeline: a row per %s s, the busiest row's calls/s the burst's (%.0f/s, the truth %.0f/s), none above by a third" %
      (width.group(1) if width else "?", max(rr) if rr else 0, truth))
steady_check(away(rr, float(width.group(1)) if width else 1), "--timeline: the rows")
unit = {"B": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": 1 << 30}
live = [float(r[7]) * unit.get(r[8], 0) for r in rows]
held = [i for i, v in enumerate(live) if v >= MiB]
check(held and all(v >= MiB for v in live[held[0]:]),
      "--timeline: the live bytes, once 1 MiB, never below it: %s" % " ".join("%s %s" % (r[7], r[8]) for r in rows))
PY
while IFS= read -r line; do
	case "$line" in
	"ok "*) ok 0 "${line#ok }" ;;
	"not ok "*) ok 1 "${line#not ok }" ;;
	"skip "*) skip "${line#skip }" ;;
	*) echo "# $line" ;;
	esac
done < "$mf_work/judged"
[ "$(head -c 8 "$MF_TESTS/t_html_rates.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
ok $? "a PNG screenshot kept as tests/progs/t_html_rates.png"
done_testing
