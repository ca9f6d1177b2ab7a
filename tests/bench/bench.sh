#!/bin/sh
# make bench: each workload plain, under malloc_freq (every call, and sampled with
# MALLOC_FREQ_SAMPLE=100; every workload heaptrack runs also with MALLOC_FREQ_LIFETIMES=1,
# every call and sampled: "sampled-life"),
# under heaptrack (if installed), and under "floor" (tests/bench/bench_floor.c: a preload that
# only counts each call down and calls glibc's allocator, the least any preloaded profiler costs),
# in interleaved repetitions;
# prints the median CPU time, wall time and peak RSS of each as a ratio to the plain run, the
# ratio of the fastest runs' CPU times (added noise disturbs it least; a drift of the
# machine's speed during the run disturbs both), the minor page faults it adds to the plain
# run's (medians: they hold still where timings do not, and show what instruction counts do
# not, as each page touched first costs a few microseconds in the kernel), and the size of
# what each profiler wrote.
# Ratios, not seconds: the machine is shared and noisy. Then, once per workload and on a
# shorter input where it is long: callgrind's instructions per recorded call (stable on a noisy
# machine), the system calls of cc1 and node (strace), and MALLOC_FREQ_UNWIND=check's verdict.
# Workloads:
#   synthetic      threads that only malloc and free, at several depths (also with
#                  MALLOC_FREQ_UNWIND=libunwind, to show what the cached unwinder buys)
#   churn          tests/bench/bench_churn, lifetimes' own: 2 threads whose blocks (chains, calloc,
#                  a realloc pair, strdup) are each freed by the thread that made it
#   wrapper2 .. mix  tests/bench/bench_shapes, the stack shapes of real code: an allocation wrapper
#                  reached by 2, 4 or 16 paths (and by 4 with the stack 10 or 30 deep), an
#                  unrolled loop, one site 3, 10 or 30 frames deep, a recursion, a mix in 2
#                  threads; *-fp: built with frame pointers. Their counts are known by
#                  construction: the stacks of every profiled run are checked (exactness).
#   python3 (an interpreter), sqlite3 (a database shell), sort --parallel (a multi-threaded
#   tool), cc1 (gcc's compiler proper on mf_print/tree.c at -O2), node (4 worker threads of
#   JIT-compiled code), startup (300 short processes: the cost of starting and finishing a
#   profile; again with the profiles on tmpfs; also with the rule cache off, as every run of a
#   program met for the first time). The rule cache is the bench's own, empty at start: the
#   first run of each workload fills it.
# Environment: MF_LIB, MF_BUILD (build dir), MF_SRC (source dir), MF_FLOOR (the floor's .so;
# without it, that row is skipped), REPS (default 5; node takes
# at most 3), WORKLOADS (default all). Exit status 1 if a profile was not exact; timings never
# fail the bench.
set -u
reps=${REPS:-5}
run=$MF_BUILD/tests/bench/bench_run
mf_print=$MF_BUILD/mf_print/mf_print
work=$(mktemp -d "${TMPDIR:-/tmp}/mf_bench.XXXXXX")
shm=
trap 'rm -rf "$work" $shm' EXIT
MALLOC_FREQ_CACHE=$work/cache
export MALLOC_FREQ_CACHE
have_heaptrack=$(command -v heaptrack || true)
floor=${MF_FLOOR:-}
[ -z "$floor" ] || [ -f "$floor" ] || floor=

# the smallest of the numbers on stdin
least() { sort -n | head -1; }
# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ---- the workloads ----
all=
# workload NAME CONFIGS REPS FULL SHORT [exact]: FULL is the command line the table times,
# SHORT the one that callgrind, strace and check mode run (split as sh splits words, so quote
# as in sh); "exact": CMD expect prints the stacks CMD makes, each with its calls.
workload() {
	k=$(echo "$1" | tr - _)
	eval "configs_$k=\$2 reps_$k=\$3 full_$k=\$4 short_$k=\$5 exact_$k=\${6:-}"
	all="$all $1"
}
# missing NAME WHY: a workload whose program is not installed
missing() {
	workload "$1" "" 0 "" "" && eval "missing_$(echo "$1" | tr - _)=\$2"
}
# field FIELD NAME: that field of the workload
field() { eval "printf '%s' \"\${$1_$(echo "$2" | tr - _):-}\""; }
# base NAME: where the workload's profiles go
base() { if [ "$1" = startup-tmpfs ]; then echo "$shm"; else echo "$work"; fi; }

workload synthetic "floor malloc_freq sampled libunwind lifetimes sampled-life heaptrack" "$reps" \
	"$MF_BUILD/tests/bench/bench_alloc 2 2000000" "$MF_BUILD/tests/bench/bench_alloc 1 200000"
workload churn "floor malloc_freq sampled lifetimes sampled-life heaptrack" "$reps" \
	"$MF_BUILD/tests/bench/bench_churn 2 1000000" "$MF_BUILD/tests/bench/bench_churn 2 20000"
# iterations for about 0.3 s plain, and for about 100,000 calls under callgrind and check
for s in wrapper2:16000000:100000 wrapper4:16000000:100000 wrapper16:16000000:100000 \
	wrap4-depth10:12000000:100000 wrap4-depth30:6000000:100000 unrolled:5000000:25000 \
	depth3:20000000:100000 depth10:12000000:100000 depth30:6000000:100000 \
	recursive:8000000:100000 mix:4000000:40000; do
	set -- $(echo "$s" | tr : ' ')
	workload "$1" "floor malloc_freq sampled" "$reps" "$MF_BUILD/tests/bench/bench_shapes $1 $2" \
		"$MF_BUILD/tests/bench/bench_shapes $1 $3" exact
done
for s in wrapper2 wrapper4 wrapper16 depth3 depth10 depth30; do
	workload "$s-fp" "floor malloc_freq sampled" "$reps" "$(field full $s | sed 's/shapes /shapes_fp /')" \
		"$(field short $s | sed 's/shapes /shapes_fp /')" exact
done

# inputs of the real programs
cat > "$work/work.py" <<'PY'
import json, re, collections, sys
n = int(sys.argv[1]) if len(sys.argv) > 1 else 60000
d = collections.Counter()
for i in range(n):
    s = json.dumps({"k": i, "v": [i, str(i) * 3], "w": {"x": i % 7}})
    d[re.sub(r"\d", "x", s)[:12]] += len(json.loads(s)["v"])
print(len(d), sum(d.values()))
PY
for rows in 150000 5000; do
	cat > "$work/work$rows.sql" <<SQL
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $rows)
INSERT INTO t SELECT x, printf('row %d %x', x, x * 7919) FROM c;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(b)) FROM t WHERE b LIKE 'row 1%';
SELECT a % 100, count(*) FROM t GROUP BY a % 100 ORDER BY 2 DESC LIMIT 3;
SQL
done
awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) printf "%d %s\n", int(rand() * 1e9), i }' > "$work/lines"
head -50000 "$work/lines" > "$work/lines.short"
cat > "$work/startup.sh" <<'SH'
i=0
while [ $i -lt "${1:-300}" ]; do /bin/ls / > /dev/null; i=$((i + 1)); done
SH
# node: 4 workers build arrays of objects and strings, and go through JSON, TextEncoder and
# Buffer (which allocate with malloc from JIT-compiled code); N rounds each
cat > "$work/work.js" <<'JS'
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
if (isMainThread) {
	const n = Number(process.argv[2]) || 3000;
	let done = 0, total = 0;
	for (let w = 0; w < 4; w++) {
		const worker = new Worker(__filename, { workerData: { n, w } });
		worker.on('message', (m) => { total += m; });
		worker.on('exit', () => { if (++done === 4) console.log('4 workers:', total); });
	}
} else {
	const { n, w } = workerData;
	const enc = new TextEncoder();
	let sum = 0;
	for (let i = 0; i < n; i++) {
		const a = [];
		for (let k = 0; k < 30; k++)
			a.push({ k, s: 'w' + w + ':' + i + ':' + k, v: [i, k, i * k] });
		const s = JSON.stringify(a);
		const b = JSON.parse(s);
		sum += b.length + s.length + enc.encode(s.slice(0, 64)).length + Buffer.from(s).length;
		if (i % 50 === 0)
			parentPort.postMessage(b[i % 30].k);
	}
	parentPort.postMessage(sum);
}
JS

if [ -x /usr/bin/python3 ]; then
	workload python3 "floor malloc_freq sampled lifetimes sampled-life heaptrack" "$reps" "/usr/bin/python3 $work/work.py" \
		"/usr/bin/python3 $work/work.py 3000"
else missing python3 "apt-get install python3"; fi
if command -v sqlite3 > /dev/null; then
	workload sqlite3 "floor malloc_freq sampled lifetimes sampled-life heaptrack" "$reps" \
		"sqlite3 :memory: '.read $work/work150000.sql'" "sqlite3 :memory: '.read $work/work5000.sql'"
else missing sqlite3 "apt-get install sqlite3"; fi
workload sort "floor malloc_freq sampled lifetimes sampled-life heaptrack" "$reps" \
	"sort --parallel=2 -S 64M -o $work/sorted $work/lines" \
	"sort --parallel=2 -S 64M -o $work/sorted $work/lines.short"
cc1=$(gcc -print-prog-name=cc1 2> /dev/null)
if [ -x "$cc1" ] && gcc -E -I"$MF_SRC/include" -I"$MF_BUILD" "$MF_SRC/mf_print/tree.c" \
	-o "$work/tree.i" 2> /dev/null; then
	workload cc1 "floor malloc_freq sampled lifetimes sampled-life heaptrack" "$reps" "$cc1 -quiet -O2 $work/tree.i -o /dev/null" \
		"$cc1 -quiet -O2 $work/tree.i -o /dev/null"
else missing cc1 "gcc's cc1, and mf_print/tree.c preprocessed: apt-get install gcc uthash-dev"; fi
node=$(command -v node || command -v nodejs || true)
if [ -n "$node" ]; then
	workload node "floor malloc_freq sampled lifetimes sampled-life heaptrack" "$((reps < 3 ? reps : 3))" \
		"$node $work/work.js 3000" "$node $work/work.js 100"
else missing node "apt-get install nodejs"; fi
workload startup "malloc_freq sampled nocache" "$reps" "sh $work/startup.sh" "sh $work/startup.sh 5"
if [ -d /dev/shm ] && shm=$(mktemp -d /dev/shm/mf_bench.XXXXXX); then
	workload startup-tmpfs "malloc_freq sampled nocache" "$reps" "sh $work/startup.sh" \
		"sh $work/startup.sh 5"
else missing startup-tmpfs "no /dev/shm"; fi

wanted=${WORKLOADS:-$all}
for w in $wanted; do
	case " $all " in *" $w "*) ;; *) echo "(no workload '$w'; there are:$all)" ;; esac
done
is_wanted() { case " $wanted " in *" $1 "*) [ -z "$(field missing "$1")" ] ;; *) false ;; esac; }

# ---- exactness: the stacks and counts of a profile against those known by construction ----
exact_awk='
function caller(s,   n, f) { n = split(s, f, ";"); return n > 1 ? f[n - 1] : "" }
NR == FNR { want[$1] = $2; ours[caller($1)] = 1; next }
{
	stack = $0; sub(/ [0-9]+$/, "", stack); calls = $NF; hit = 0
	for (e in want)
		if (stack == e || substr(stack, length(stack) - length(e)) == ";" e) {
			got[e] += calls; hit = 1
		}
	if (!hit && caller(stack) in ours) extra[stack] += calls
}
END {
	for (e in want) if (got[e] != want[e]) { printf "    expected %d, got %d: %s\n", want[e], got[e], e; bad++ }
	for (s in extra) { printf "    expected 0, got %d: %s\n", extra[s], s; bad++ }
	exit bad > 0
}'
# exact NAME RUN DIR CMD...: checks the profile in DIR that CMD made, if NAME is a bench_shapes
exact() {
	[ -n "$(field exact "$1")" ] || return 0
	x_name=$1 x_run=$2 x_dir=$3
	shift 3
	"$@" expect > "$work/expected"
	"$mf_print" --collapsed "$x_dir" > "$work/got" 2> /dev/null
	if awk "$exact_awk" "$work/expected" "$work/got" > "$work/differs"; then
		echo "$x_name" >> "$work/exact.ok"
	else
		echo "EXACTNESS: $x_name, $x_run: the profile is not the counts known by construction:" >> "$work/exact.bad"
		head -20 "$work/differs" >> "$work/exact.bad"
	fi
}
# input CMD...: the command line without directories
input() { echo "$*" | sed "s|[^ ']*/||g"; }
# fresh DIR: DIR, empty
fresh() { rm -rf "$1" && mkdir -p "$1"; }
# on_short FUNCTION SUBDIR: for each wanted workload, FUNCTION NAME DIR SHORT-CMD... with DIR
# an empty directory for its profiles
on_short() {
	f=$1 sub=$2
	for w in $all; do
		is_wanted "$w" || continue
		eval "set -- $(field short "$w")"
		dir=$(base "$w")/$sub
		fresh "$dir" && "$f" "$w" "$dir" "$@"
	done
}

# ---- the table ----
# measure NAME CONFIG CMD...: one run; appends "cpu wall rss status faults size" to
# $work/NAME.CONFIG
measure() {
	name=$1 config=$2; shift 2
	out=$(base "$name")/out.$config
	fresh "$out"
	case $config in
	plain) r=$("$run" "$@" 2>/dev/null | tail -1) ;;
	floor) r=$("$run" env LD_PRELOAD="$floor" "$@" 2>/dev/null | tail -1) ;;
	malloc_freq) r=$("$run" env MALLOC_FREQ_DIR="$out" LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	sampled) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_SAMPLE=100 LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	lifetimes) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_LIFETIMES=1 LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	sampled-life) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_SAMPLE=100 MALLOC_FREQ_LIFETIMES=1 LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	libunwind) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_UNWIND=libunwind LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	nocache) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_CACHE=off LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	heaptrack) r=$("$run" heaptrack -o "$out/ht" "$@" 2>/dev/null | tail -1) ;;
	esac
	size=$(du -sk "$out" | cut -f1)
	echo "$r $size" >> "$work/$name.$config"
	case $config in malloc_freq | libunwind | lifetimes) exact "$name" "$config run" "$out" "$@" ;; esac
}

# bench NAME: the workload's rows
bench() {
	name=$1 configs="plain $(field configs "$1")" n=$(field reps "$1")
	eval "set -- $(field full "$1")"
	[ -n "$have_heaptrack" ] || configs=$(echo "$configs" | sed 's/ heaptrack//')
	[ -n "$floor" ] || configs=$(echo "$configs" | sed 's/ floor//')
	i=0
	while [ $i -lt "$n" ]; do
		for c in $configs; do measure "$name" "$c" "$@"; done
		i=$((i + 1))
	done
	base_cpu=$(cut -d' ' -f1 "$work/$name.plain" | median)
	base_least=$(cut -d' ' -f1 "$work/$name.plain" | least)
	base_wall=$(cut -d' ' -f2 "$work/$name.plain" | median)
	base_rss=$(cut -d' ' -f3 "$work/$name.plain" | median)
	base_faults=$(cut -d' ' -f5 "$work/$name.plain" | median)
	for c in $configs; do
		cpu=$(cut -d' ' -f1 "$work/$name.$c" | median)
		least=$(cut -d' ' -f1 "$work/$name.$c" | least)
		wall=$(cut -d' ' -f2 "$work/$name.$c" | median)
		rss=$(cut -d' ' -f3 "$work/$name.$c" | median)
		faults=$(cut -d' ' -f5 "$work/$name.$c" | median)
		size=$(cut -d' ' -f6 "$work/$name.$c" | median)
		awk -v n="$name" -v c="$c" -v cpu="$cpu" -v bc="$base_cpu" -v w="$wall" -v bw="$base_wall" \
			-v r="$rss" -v br="$base_rss" -v s="$size" -v l="$least" -v bl="$base_least" \
			-v f="$faults" -v bf="$base_faults" 'BEGIN {
			printf "| %-13s | %-12s | %8.3f | %8.2fx | %8.2fx | %9.2fx | %8.2fx | %+12d | %9s |\n",
				n, c, cpu, cpu / bc, l / bl, w / bw, r / br, f - bf,
				c == "plain" ? "-" : s " KiB" }'
	done
}

echo "median of $reps interleaved runs (node: of at most 3); ratios to the plain run (cpu, least: of"
echo "each one's fastest run, which added noise disturbs least; if the machine's speed drifts during"
echo "the run, neither holds); faults added: minor page faults beyond the plain run's (medians)"
[ -n "$have_heaptrack" ] || echo "(heaptrack is not installed: its column is skipped; apt-get install heaptrack)"
[ -n "$floor" ] || echo "(no MF_FLOOR: the floor's rows are skipped; make bench builds it)"
echo
echo "| workload      | config       |  cpu (s) | cpu/plain | cpu least | wall/plain | rss/plain | faults added | profile   |"
echo "|---------------|--------------|----------|-----------|-----------|------------|-----------|--------------|-----------|"
for w in $all; do
	case " $wanted " in *" $w "*) ;; *) continue ;; esac
	if [ -n "$(field missing "$w")" ]; then
		printf '| %-13s | (not installed: %s) |\n' "$w" "$(field missing "$w")"
	else
		bench "$w"
	fi
done
echo
for s in startup startup-tmpfs; do
	is_wanted $s || continue
	p=$(cut -d' ' -f1 "$work/$s.plain" | median)
	lp=$(cut -d' ' -f1 "$work/$s.plain" | least)
	for c in malloc_freq nocache; do
		m=$(cut -d' ' -f1 "$work/$s.$c" | median)
		lm=$(cut -d' ' -f1 "$work/$s.$c" | least)
		awk -v s="$s" -v c="$c" -v p="$p" -v m="$m" -v lp="$lp" -v lm="$lm" 'BEGIN { printf "%s, %s: %.3f ms of cpu more per profiled process (300 runs of ls, and their shell; fastest runs: %.3f ms)\n", s, c == "nocache" ? "rule cache off (a first run)" : "rule cache on", (m - p) * 1000 / 301, (lm - lp) * 1000 / 301 }'
	done
done

# recorded DIR: the calls that the profiles in DIR recorded, from mf_print's summary
recorded() { "$mf_print" "$1" 2> /dev/null | sed -n '1s/^malloc_freq: \([0-9]*\) calls.*/\1/p'; }

# ---- instructions per call, stable on a noisy machine ----
if command -v valgrind > /dev/null; then
	# irefs CMD...: the instructions CMD and its children execute
	irefs() {
		valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$work/cg.%p" "$@" 2>&1 |
			awk '/refs:/ { gsub(",", "", $4); s += $4 } END { printf "%.0f", s }'
		rm -f "$work"/cg.*
	}
	echo
	echo "callgrind, once on each workload's short input (env runs both, so its instructions cancel):"
	echo "instructions plain and profiled (every call recorded), and those added per recorded call;"
	echo "the timeline's records a day apart: its look every 64 calls counted, not the walks that"
	echo "callgrind's slower clock would add (one a second of the run's wall time)"
	echo
	echo "| workload      | input                                           | calls recorded | plain (M) | profiled (M) |  ratio | added per call |"
	echo "|---------------|-------------------------------------------------|----------------|-----------|--------------|--------|----------------|"
	# The timeline walks a thread's nodes once a second of wall time. Under callgrind a run
	# takes 100 to 200 times as long as natively, and longer the busier the machine: cc1's
	# short input, under a second and no walk natively, made 56 to 89 walks there, 330 to 420
	# instructions per recorded call that moved with the load. A day's interval keeps the
	# look every 64 calls (the clock read and the test) and leaves out those walks.
	cg_env="MALLOC_FREQ_TIMELINE=86400"
	# cg_row NAME DIR CMD...
	cg_row() {
		name=$1 dir=$2
		shift 2
		plain=$(irefs env "$@")
		prof=$(irefs env MALLOC_FREQ_DIR="$dir" $cg_env LD_PRELOAD="$MF_LIB" "$@")
		calls=$(recorded "$dir")
		exact "$name" "callgrind run" "$dir" "$@"
		echo "$plain $prof ${calls:-0}" > "$work/$name.cg"
		awk -v w="$name" -v i="$(input "$@")" -v p="$plain" -v m="$prof" -v n="${calls:-0}" 'BEGIN {
			printf "| %-13s | %-47s | %14d | %9.1f | %12.1f | %5.2fx | %14s |\n", w, i, n,
				p / 1e6, m / 1e6, m / p, n ? sprintf("%.0f", (m - p) / n) : "?" }'
	}
	on_short cg_row cg
	if is_wanted synthetic; then
		n=200000
		read -r plain prof calls < "$work/synthetic.cg"
		lu=$(irefs env MALLOC_FREQ_DIR="$work" $cg_env MALLOC_FREQ_UNWIND=libunwind LD_PRELOAD="$MF_LIB" "$MF_BUILD/tests/bench/bench_alloc" 1 $n)
		awk -v p="$plain" -v m="$prof" -v l="$lu" -v n=$n 'BEGIN {
			printf "\ncallgrind, synthetic, 1 thread, %d malloc+free (each recorded): instructions per call\n", n
			printf "  plain %.0f; malloc_freq %.0f (%.0f added); with MALLOC_FREQ_UNWIND=libunwind %.0f\n",
				p / n, m / n, (m - p) / n, l / n }'
		rm -rf "$work"/malloc_freq.*
	fi
else
	echo
	echo "(valgrind not installed: no instruction counts; apt-get install valgrind)"
fi

# ---- system calls: one per recorded call would show ----
# syscalls FILE: "total NAME CALLS..." from strace -c's table
syscalls() { awk '$1 ~ /^[0-9.]+$/ && NF >= 5 { printf "%s %s\n", $NF, $4 }' "$1"; }
# st_row NAME DIR CMD...: for cc1 and node
st_row() {
	case $1 in cc1 | node) ;; *) return ;; esac
	name=$1 dir=$2
	shift 2
	strace -f -c -o "$work/st.plain" env "$@" > /dev/null 2>&1
	strace -f -c -o "$work/st.prof" env MALLOC_FREQ_DIR="$dir" LD_PRELOAD="$MF_LIB" "$@" > /dev/null 2>&1
	calls=$(recorded "$dir")
	syscalls "$work/st.plain" > "$work/st.p"
	syscalls "$work/st.prof" > "$work/st.m"
	echo
	awk -v w="$name" -v i="$(input "$@")" -v n="${calls:-0}" '
		NR == FNR { p[$1] = $2; next }
		{ m[$1] = $2 }
		END {
			printf "strace -f -c, %s (%s): %d system calls plain, %d profiled (%+d; %.3f per recorded call, %d calls recorded)\n",
				w, i, p["total"], m["total"], m["total"] - p["total"], n ? (m["total"] - p["total"]) / n : 0, n
			for (s in m) if (s != "total") d[s] = m[s] - p[s]
			for (s in p) if (!(s in m)) d[s] = -p[s]
			for (k = 0; k < 6; k++) {
				best = ""
				for (s in d) if (best == "" || d[s] > d[best] || (d[s] == d[best] && s < best)) best = s
				if (best == "" || d[best] <= 0) break
				printf "  %-18s %8d plain %8d profiled (%+d)\n", best, p[best], m[best], d[best]
				delete d[best]
			}
		}' "$work/st.p" "$work/st.m"
}
if command -v strace > /dev/null; then
	on_short st_row st
elif is_wanted cc1 || is_wanted node; then
	echo
	echo "(strace not installed: no system call counts; apt-get install strace)"
fi

# ---- check mode: every stack compared with libunwind's ----
echo
echo "MALLOC_FREQ_UNWIND=check, once on each workload's short input: the library's last line"
echo "(summed over the processes of a workload), and its first differences if any"
echo
echo "| workload      | unwind check |"
echo "|---------------|--------------|"
# check_row NAME DIR CMD...
check_row() {
	name=$1 dir=$2
	shift 2
	if command -v strace > /dev/null; then
		# the library's writes to descriptor 2 even where they fail: ls and sort close
		# stderr before the library's destructor says its last line
		strace -f -qq --seccomp-bpf -e trace=write -e signal=none -s 1000 -o "$work/check.trace" \
			env MALLOC_FREQ_DIR="$dir" MALLOC_FREQ_UNWIND=check LD_PRELOAD="$MF_LIB" "$@" > /dev/null 2>&1
		sed -n 's/.*write(2, "\(malloc_freq: unwind check:.*\)\\n", [0-9]*).*/\1/p' "$work/check.trace" > "$work/check.err"
	else
		env MALLOC_FREQ_DIR="$dir" MALLOC_FREQ_UNWIND=check LD_PRELOAD="$MF_LIB" "$@" > /dev/null 2> "$work/check.err"
	fi
	exact "$name" "check run" "$dir" "$@"
	awk -v w="$name" '
		/unwind check: [0-9]+ stacks compared/ {
			t = $0; sub(/.*unwind check: /, "", t); n++; k = 0
			while (match(t, /[0-9]+/)) {
				k++; text[k] = substr(t, 1, RSTART - 1); sum[k] += substr(t, RSTART, RLENGTH)
				t = substr(t, RSTART + RLENGTH)
			}
			tail = t; nk = k; next
		}
		/unwind check:/ && shown < 3 { first[++shown] = $0 }
		END {
			s = ""
			for (k = 1; k <= nk; k++) s = s text[k] sum[k]
			if (n)
				printf "| %-13s | %s%s%s |\n", w, s, tail, (n > 1 ? " (" n " processes)" : "")
			else # (without strace: ls and sort close stderr first)
				printf "| %-13s | no last line (stderr closed first?); %d lines of differences |\n", w, shown
			for (k = 1; k <= shown; k++) printf "|               | %s |\n", first[k]
		}' "$work/check.err"
}
on_short check_row check

# ---- exactness, last: the bench fails if a profile was not exact ----
echo
if [ -f "$work/exact.bad" ]; then
	cat "$work/exact.bad"
	echo "exactness: DIFFERS ($(grep -c '^EXACTNESS' "$work/exact.bad") profiled runs not exact;" \
		"$(sort -u "$work/exact.ok" 2> /dev/null | wc -l) workloads had exact runs)"
	exit 1
elif [ -f "$work/exact.ok" ]; then
	echo "exactness: OK ($(wc -l < "$work/exact.ok") profiled runs of $(sort -u "$work/exact.ok" | wc -l)" \
		"workloads with counts known by construction: every stack and count as expected)"
fi
