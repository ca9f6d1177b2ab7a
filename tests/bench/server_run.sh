#!/bin/sh
# make bench-server: a long attached run of a server (tests/bench/bench_server: a worker pool, a
# short-lived worker every 2 s, a slow leak in one request type, a 10 s burst every minute).
# The program is started plainly; after WARMUP seconds it is paused (every worker parked),
# malloc_freq --attach'ed and resumed; MINUTES later paused again, --detach'ed and resumed; it
# runs AFTER seconds more and is told to end. Checks: the profile's calls per request site and
# allocation function are exactly the program's own count for the attached phase, its total
# is their sum, every file was made final, the program ends after the detach with its own
# status (7), and (with lifetimes and the timeline) the timeline's last point has every block
# the leaking request made while attached live, 256 bytes each. Prints the bursts' times on the
# timeline's axis and mf_print --timeline (the leak's slope in live bytes, the bursts in the
# call rate, placed to within a row: a thread records at most every interval), and leaves the
# profile, the program's answers and an --html page in OUT. Timings are never checked.
# Environment: MF_BUILD (build dir), MINUTES (default 1; ATTACHED: seconds instead), WARMUP (default 5), AFTER (default
# 10), OUT (default a new directory under TMPDIR), MF_ATTACH_ENV (settings for the attach,
# default MALLOC_FREQ_LIFETIMES=1), POOL (workers, default 4). Exit status 1 if a check failed.
set -u
build=${MF_BUILD:?}
launcher=$build/launcher/malloc_freq
mf_print=$build/mf_print/mf_print
prog=$build/tests/bench/bench_server
minutes=${MINUTES:-1}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mf_server.XXXXXX")}
mkdir -p "$out" && cd "$out" || exit 2
command -v gdb > /dev/null || { echo "server_run: no gdb: --attach runs it" >&2; exit 2; }
command -v python3 > /dev/null || { echo "server_run: no python3: it reads the --json" >&2; exit 2; }
fails=0
check() { # check STATUS WHAT
	if [ "$1" -eq 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fails=$((fails + 1)); fi
}

rm -rf in outp prof answers.txt
mkfifo in outp
# shellcheck disable=SC2046 # (one -u NAME per variable)
env $(env | sed -n 's/^\(MALLOC_FREQ_[A-Za-z0-9_]*\)=.*/-u \1/p') -u LD_PRELOAD \
	"$prog" "${POOL:-4}" < in > outp & pid=$!
# (a run cut short leaves no program behind)
trap '[ -z "$pid" ] || kill "$pid" 2> /dev/null' EXIT
exec 3> in 4< outp
# ask LINE UNTIL: sends LINE, keeps the answers in answers.txt up to the one that starts with UNTIL
ask() {
	echo "$1" >&3
	while read -r answer <&4; do
		echo "$answer" >> answers.txt
		case $answer in "$2"*) return 0 ;; esac
	done
	return 1
}
read -r first <&4; echo "$first" >> answers.txt
sleep "${WARMUP:-5}"
ask p "paused 0"
# (gdb 13 may say "ptrace: No such process" while threads are busy: tried again, up to 5 times)
tries=0
while :; do
	tries=$((tries + 1))
	date +%s%N > attach.time
	# shellcheck disable=SC2086 # (the settings, split as words)
	env ${MF_ATTACH_ENV:-MALLOC_FREQ_LIFETIMES=1} "$launcher" --attach "$pid" -o prof \
		2> attach.err && break
	cat attach.err >&2
	if [ "$tries" -ge 5 ] || ! grep -q 'No such process' attach.err; then
		check 1 "--attach"
		exit 1
	fi
done
check 0 "--attach (try $tries)"
ask r resumed
sleep "${ATTACHED:-$((minutes * 60))}"
ask p "paused 1"
date +%s%N > detach.time
"$launcher" --detach "$pid" 2> detach.err; check $? "--detach"
ask r resumed
sleep "${AFTER:-10}"
ask q end
exec 3>&- 4<&-
wait "$pid"; status=$? pid=
check $((status != 7)) "the program ran on after the detach and ended with its own status ($status)"

"$mf_print" prof > report.txt 2> print.err
check $? "mf_print reads the profile"
grep -q 'not finalized' report.txt; check $((!$?)) "every file final"
"$mf_print" --json prof > prof.json 2>> print.err
"$mf_print" --html prof.html prof > /dev/null 2>> print.err
python3 - answers.txt prof.json << 'EOF'; check $? "the profile's calls are the program's own count of the attached phase, per site and function"
import collections, json, sys
want, total = collections.Counter(), None
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "count" and w[1] == "1":
        want[(w[2], w[3])] = int(w[4])
    elif w[0] == "total" and w[1] == "1":
        total = int(w[2])
d = json.load(open(sys.argv[2]))
fr, st = d["frames"], d["stacks"]
got, other = collections.Counter(), collections.Counter()
for s in d["samples"]:
    stack = st[s["stack"]]
    names = [fr[f]["function"] for f in stack["frames"]]
    site = [n for n in names if n in ("req_small", "req_parse", "req_session", "req_leak", "req_aligned")]
    key = (site[-1] if site else None, stack["entry"])
    (got if site else other)[key] += s["values"]["calls"]
ok = True
print("%-12s %-14s %12s %12s" % ("site", "function", "program", "profile"))
for k in sorted(set(want) | set(got)):
    print("%-12s %-14s %12d %12d%s" % (k[0], k[1], want[k], got[k], "" if want[k] == got[k] else "  DIFFERS"))
    ok &= want[k] == got[k]
prof_total = d["summary"]["total"]["calls"]
print("program's total %d, profile's total %d, of which outside the sites %d %s" % (total, prof_total, sum(other.values()), dict(other)))
ok &= total == sum(want.values()) and sum(got.values()) == total and prof_total == total
# the leak: every block req_leak made while attached is live at the end, 256 bytes each
tl = d["processes"][0]["timeline"]
if tl:
    last = tl["points"][-1]
    print("timeline's end: %d blocks, %d bytes live; req_leak's blocks: %d (%d bytes)" % (last[5], last[4], want[("req_leak", "malloc")], 256 * want[("req_leak", "malloc")]))
    ok &= last[5] == want[("req_leak", "malloc")] and last[4] == 256 * last[5]
sys.exit(0 if ok else 1)
EOF
# the bursts on the timeline's axis (mf_print --timeline's rows: seconds since the profile's
# first point)
python3 - answers.txt prof.json << 'EOF'
import json, sys
w = open(sys.argv[1]).readline().split()
start, period, at, length = int(w[1]), int(w[3]), int(w[5]), int(w[7])
tl = json.load(open(sys.argv[2]))["processes"][0]["timeline"]
if tl:
    t0, t1 = tl["points"][0][0], tl["points"][-1][0]
    b = [(start + (k * period + at) * 10**9 - t0) / 1e9 for k in range(1000)]
    print("bursts on the timeline (s):", ", ".join("%.1f-%.1f" % (x, x + length) for x in b
                                                  if -length < x < (t1 - t0) / 1e9))
EOF
"$mf_print" --timeline prof 2>> print.err | sed -n '/, a row per /,$p' | head -80
echo "profile, answers, report, prof.json, prof.html in $out"
[ "$fails" -eq 0 ]
