#!/bin/sh
# make bench: each workload plain, under malloc_freq (every call, and sampled with
# MALLOC_FREQ_SAMPLE=100), and under heaptrack (if installed), in
# interleaved repetitions; prints the median CPU time, wall time and peak RSS of each as a
# ratio to the plain run, and the size of what each profiler wrote. Ratios, not seconds: the
# machine is shared and noisy. Environment: MF_LIB, MF_BUILD (build dir), REPS (default 5).
set -u
reps=${REPS:-5}
run=$MF_BUILD/tests/bench_run
work=$(mktemp -d "${TMPDIR:-/tmp}/mf_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
have_heaptrack=$(command -v heaptrack || true)

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CONFIG CMD...: one run; appends "cpu wall rss size" to $work/NAME.CONFIG
measure() {
	name=$1 config=$2; shift 2
	out=$work/out.$config
	rm -rf "$out" && mkdir -p "$out"
	case $config in
	plain) r=$("$run" "$@" 2>/dev/null | tail -1) ;;
	malloc_freq) r=$("$run" env MALLOC_FREQ_DIR="$out" LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	sampled) r=$("$run" env MALLOC_FREQ_DIR="$out" MALLOC_FREQ_SAMPLE=100 LD_PRELOAD="$MF_LIB" "$@" 2>/dev/null | tail -1) ;;
	heaptrack) r=$("$run" heaptrack -o "$out/ht" "$@" 2>/dev/null | tail -1) ;;
	esac
	size=$(du -sk "$out" | cut -f1)
	echo "$r $size" >> "$work/$name.$config"
}

# bench NAME CMD...
bench() {
	name=$1; shift
	configs="plain malloc_freq sampled"
	[ -n "$have_heaptrack" ] && configs="$configs heaptrack"
	i=0
	while [ $i -lt "$reps" ]; do
		for c in $configs; do measure "$name" "$c" "$@"; done
		i=$((i + 1))
	done
	base_cpu=$(cut -d' ' -f1 "$work/$name.plain" | median)
	base_wall=$(cut -d' ' -f2 "$work/$name.plain" | median)
	base_rss=$(cut -d' ' -f3 "$work/$name.plain" | median)
	for c in $configs; do
		cpu=$(cut -d' ' -f1 "$work/$name.$c" | median)
		wall=$(cut -d' ' -f2 "$work/$name.$c" | median)
		rss=$(cut -d' ' -f3 "$work/$name.$c" | median)
		size=$(cut -d' ' -f5 "$work/$name.$c" | median)
		awk -v n="$name" -v c="$c" -v cpu="$cpu" -v bc="$base_cpu" -v w="$wall" -v bw="$base_wall" \
			-v r="$rss" -v br="$base_rss" -v s="$size" 'BEGIN {
			printf "| %-12s | %-12s | %8.3f | %8.2fx | %9.2fx | %8.2fx | %9s |\n", n, c, cpu,
				cpu / bc, w / bw, r / br, c == "plain" ? "-" : s " KiB" }'
	done
}

echo "median of $reps interleaved runs; ratios to the plain run"
[ -n "$have_heaptrack" ] || echo "(heaptrack is not installed: its column is skipped; apt-get install heaptrack)"
echo
echo "| workload     | config       |  cpu (s) | cpu/plain | wall/plain | rss/plain | profile   |"
echo "|--------------|--------------|----------|-----------|------------|-----------|-----------|"
bench synthetic "$MF_BUILD/tests/bench_alloc" 2 2000000
