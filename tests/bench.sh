#!/bin/sh
# make bench: each workload plain, under malloc_freq (every call, and sampled with
# MALLOC_FREQ_SAMPLE=100), and under heaptrack (if installed), in interleaved repetitions;
# prints the median CPU time, wall time and peak RSS of each as a ratio to the plain run, the
# ratio of the fastest runs' CPU times (added noise disturbs it least; a drift of the
# machine's speed during the run disturbs both), and the size of what each
# profiler wrote. Ratios, not seconds: the machine is shared and noisy.
# Workloads: the synthetic worst case (threads that only malloc and free, at several depths;
# also with MALLOC_FREQ_UNWIND=libunwind, to show what the cached unwinder buys), an
# interpreter (python3), a database shell (sqlite3), a multi-threaded tool (sort --parallel)
# and 300 short processes (the cost of starting and finishing a profile; again with the
# profiles on tmpfs, which leaves out what creating files costs on disk; and with the rule
# cache off, as every run of a program met for the first time). Then callgrind's instructions
# per call on the synthetic program, plain and profiled. The rule cache is the bench's own,
# empty at start: the first run of each workload fills it.
# Environment: MF_LIB, MF_BUILD (build dir), REPS (default 5), WORKLOADS (default all).
set -u
reps=${REPS:-5}
run=$MF_BUILD/tests/bench_run
work=$(mktemp -d "${TMPDIR:-/tmp}/mf_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
MALLOC_FREQ_CACHE=$work/cache
export MALLOC_FREQ_CACHE
have_heaptrack=$(command -v heaptrack || true)

# the smallest of the numbers on stdin
least() { sort -n | head -1; }
# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CONFIG CMD...: one run; appends "cpu wall rss size" to $work/NAME.CONFIG
measure() {
	name=$1 config=$2; shift 2
	out=${outbase:-$work}/out.$config
	rm -rf "$out" && mkdir -p "$out"
	case $config in
	plain) r=$("$run" "$@" 2>/dev/null | tail -1) ;;
	malloc_freq) r=$("$run" env MALLOC_FREQ_DIR="$out" LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	sampled) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_SAMPLE=100 LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	libunwind) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_UNWIND=libunwind LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	nocache) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_CACHE=off LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	heaptrack) r=$("$run" heaptrack -o "$out/ht" "$@" 2>/dev/null | tail -1) ;;
	esac
	size=$(du -sk "$out" | cut -f1)
	echo "$r $size" >> "$work/$name.$config"
}

# bench NAME CONFIGS CMD...: CONFIGS among malloc_freq sampled libunwind nocache heaptrack
bench() {
	name=$1 configs="plain $2"; shift 2
	case " $wanted " in *" $name "*) ;; *) return ;; esac
	[ -n "$have_heaptrack" ] || configs=$(echo "$configs" | sed 's/ heaptrack//')
	i=0
	while [ $i -lt "$reps" ]; do
		for c in $configs; do measure "$name" "$c" "$@"; done
		i=$((i + 1))
	done
	base_cpu=$(cut -d' ' -f1 "$work/$name.plain" | median)
	base_least=$(cut -d' ' -f1 "$work/$name.plain" | least)
	base_wall=$(cut -d' ' -f2 "$work/$name.plain" | median)
	base_rss=$(cut -d' ' -f3 "$work/$name.plain" | median)
	for c in $configs; do
		cpu=$(cut -d' ' -f1 "$work/$name.$c" | median)
		least=$(cut -d' ' -f1 "$work/$name.$c" | least)
		wall=$(cut -d' ' -f2 "$work/$name.$c" | median)
		rss=$(cut -d' ' -f3 "$work/$name.$c" | median)
		size=$(cut -d' ' -f5 "$work/$name.$c" | median)
		awk -v n="$name" -v c="$c" -v cpu="$cpu" -v bc="$base_cpu" -v w="$wall" -v bw="$base_wall" \
			-v r="$rss" -v br="$base_rss" -v s="$size" -v l="$least" -v bl="$base_least" 'BEGIN {
			printf "| %-13s | %-12s | %8.3f | %8.2fx | %8.2fx | %9.2fx | %8.2fx | %9s |\n", n, c, cpu,
				cpu / bc, l / bl, w / bw, r / br, c == "plain" ? "-" : s " KiB" }'
	done
}

wanted=${WORKLOADS:-synthetic python3 sqlite3 sort startup startup-tmpfs}
# inputs of the real programs
cat > "$work/work.py" <<'PY'
import json, re, collections
d = collections.Counter()
for i in range(60000):
    s = json.dumps({"k": i, "v": [i, str(i) * 3], "w": {"x": i % 7}})
    d[re.sub(r"\d", "x", s)[:12]] += len(json.loads(s)["v"])
print(len(d), sum(d.values()))
PY
cat > "$work/work.sql" <<'SQL'
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 150000)
INSERT INTO t SELECT x, printf('row %d %x', x, x * 7919) FROM c;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(b)) FROM t WHERE b LIKE 'row 1%';
SELECT a % 100, count(*) FROM t GROUP BY a % 100 ORDER BY 2 DESC LIMIT 3;
SQL
awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) printf "%d %s\n", int(rand() * 1e9), i }' > "$work/lines"
cat > "$work/startup.sh" <<'SH'
i=0
while [ $i -lt 300 ]; do /bin/ls / > /dev/null; i=$((i + 1)); done
SH

echo "median of $reps interleaved runs; ratios to the plain run (cpu, least: of each one's fastest run,"
echo "which added noise disturbs least; if the machine's speed drifts during the run, neither holds)"
[ -n "$have_heaptrack" ] || echo "(heaptrack is not installed: its column is skipped; apt-get install heaptrack)"
echo
echo "| workload      | config       |  cpu (s) | cpu/plain | cpu least | wall/plain | rss/plain | profile   |"
echo "|---------------|--------------|----------|-----------|-----------|------------|-----------|-----------|"
bench synthetic "malloc_freq sampled libunwind heaptrack" "$MF_BUILD/tests/bench_alloc" 2 2000000
if [ -x /usr/bin/python3 ]; then
	bench python3 "malloc_freq sampled heaptrack" /usr/bin/python3 "$work/work.py"
else echo "| python3      | (not installed: apt-get install python3) |"; fi
if command -v sqlite3 > /dev/null; then
	bench sqlite3 "malloc_freq sampled heaptrack" sqlite3 :memory: ".read $work/work.sql"
else echo "| sqlite3      | (not installed: apt-get install sqlite3) |"; fi
bench sort "malloc_freq sampled heaptrack" sort --parallel=2 -S 64M -o "$work/sorted" "$work/lines"
bench startup "malloc_freq sampled nocache" sh "$work/startup.sh"
if [ -d /dev/shm ] && outbase=$(mktemp -d /dev/shm/mf_bench.XXXXXX); then
	bench startup-tmpfs "malloc_freq sampled nocache" sh "$work/startup.sh"
	rm -rf "$outbase"
	outbase=
fi
echo
for s in startup startup-tmpfs; do
	[ -f "$work/$s.plain" ] || continue
	p=$(cut -d' ' -f1 "$work/$s.plain" | median)
	lp=$(cut -d' ' -f1 "$work/$s.plain" | least)
	for c in malloc_freq nocache; do
		m=$(cut -d' ' -f1 "$work/$s.$c" | median)
		lm=$(cut -d' ' -f1 "$work/$s.$c" | least)
		awk -v s="$s" -v c="$c" -v p="$p" -v m="$m" -v lp="$lp" -v lm="$lm" 'BEGIN { printf "%s, %s: %.3f ms of cpu more per profiled process (300 runs of ls, and their shell; fastest runs: %.3f ms)\n", s, c == "nocache" ? "rule cache off (a first run)" : "rule cache on", (m - p) * 1000 / 301, (lm - lp) * 1000 / 301 }'
	done
done

# instructions per call, stable on a noisy machine
case " $wanted " in *" synthetic "*)
if command -v valgrind > /dev/null; then
	n=200000
	irefs() { valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$work/cg.%p" "$@" 2>&1 |
		awk '/refs:/ { gsub(",", "", $4); s += $4 } END { printf "%.0f", s }'; }
	plain=$(irefs "$MF_BUILD/tests/bench_alloc" 1 $n)
	prof=$(irefs env MALLOC_FREQ_DIR="$work" LD_PRELOAD="$MF_LIB" "$MF_BUILD/tests/bench_alloc" 1 $n)
	lu=$(irefs env MALLOC_FREQ_DIR="$work" MALLOC_FREQ_UNWIND=libunwind LD_PRELOAD="$MF_LIB" "$MF_BUILD/tests/bench_alloc" 1 $n)
	awk -v p="$plain" -v m="$prof" -v l="$lu" -v n=$n 'BEGIN {
		printf "\ncallgrind, synthetic, 1 thread, %d malloc+free (each recorded): instructions per call\n", n
		printf "  plain %.0f; malloc_freq %.0f (%.0f added); with MALLOC_FREQ_UNWIND=libunwind %.0f\n",
			p / n, m / n, (m - p) / n, l / n }'
	rm -rf "$work"/malloc_freq.* "$work"/cg.*
else
	echo "(valgrind not installed: no instruction counts; apt-get install valgrind)"
fi ;;
esac
