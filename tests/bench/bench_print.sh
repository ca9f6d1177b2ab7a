#!/bin/sh
# make bench, mf_print's section: how long mf_print takes, and how much memory, to report real
# programs' profiles (node with four workers, a cmake + ninja build, one gcc compile, ar
# loading LLVM through its linker plugin, a small Java program: whichever are installed) and
# synthetic ones (1,000 thread files; 3 million distinct stacks in one file), in each report.
# Median wall and cpu time and peak RSS of REPS runs; with MF_PRINT_BASE (another mf_print),
# that one's too, run alternately, for a before/after table.
# Environment: MF_LIB, MF_BUILD (build dir), MF_SRC (source dir), REPS (default 3),
# PRINT_WORKLOADS (default all), MF_PRINT_BASE, BENCH_PROFILES (keep the profiles there).
set -u
reps=${REPS:-3}
run=$MF_BUILD/tests/bench/bench_run
prog=$MF_BUILD/tests/bench/bench_print_prog
mf_print=$MF_BUILD/mf_print/mf_print
base=${MF_PRINT_BASE:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/mf_bench_print.XXXXXX")
trap 'rm -rf "$work"' EXIT
profiles=${BENCH_PROFILES:-$work/profiles}
mkdir -p "$profiles"
MALLOC_FREQ_CACHE=$work/cache
export MALLOC_FREQ_CACHE
wanted=${PRINT_WORKLOADS:-node cmake gcc ar java threads1000 stacks3m}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
want() { case " $wanted " in *" $1 "*) return 0 ;; esac; return 1; }

# record NAME CMD...: runs CMD under the profiler (in $work/src), profiles in $profiles/NAME;
# kept from an earlier run when BENCH_PROFILES names a directory that has them
record() {
	name=$1; shift
	[ -d "$profiles/$name" ] && [ -n "${BENCH_PROFILES:-}" ] && return 0
	rm -rf "$profiles/$name" && mkdir -p "$profiles/$name"
	(cd "$work/src" && MALLOC_FREQ_DIR="$profiles/$name" LD_PRELOAD="$MF_LIB" "$@") \
		> /dev/null 2>&1 || echo "($name: the profiled command failed)"
}

# measure NAME: each report of $profiles/NAME, REPS times, one table row per report
measure() {
	name=$1
	files=$(find "$profiles/$name" -name '*.prof' | wc -l)
	size=$(du -sm "$profiles/$name" | cut -f1)
	for mode in tree --caller --collapsed --threads; do
		opt=$mode; [ "$mode" = tree ] && opt=
		: > "$work/new" && : > "$work/base"
		i=0
		while [ $i -lt "$reps" ]; do
			"$run" sh -c 'exec "$0" "$@" > /dev/null 2>&1' "$mf_print" $opt "$profiles/$name" >> "$work/new"
			[ -n "$base" ] && "$run" sh -c 'exec "$0" "$@" > /dev/null 2>&1' "$base" $opt "$profiles/$name" >> "$work/base"
			i=$((i + 1))
		done
		wall=$(cut -d' ' -f2 "$work/new" | median)
		cpu=$(cut -d' ' -f1 "$work/new" | median)
		rss=$(cut -d' ' -f3 "$work/new" | median)
		if [ -n "$base" ]; then
			bwall=$(cut -d' ' -f2 "$work/base" | median)
			brss=$(cut -d' ' -f3 "$work/base" | median)
		else
			bwall=- brss=-
		fi
		awk -v n="$name" -v m="$mode" -v f="$files" -v s="$size" -v w="$wall" -v c="$cpu" \
			-v r="$rss" -v bw="$bwall" -v br="$brss" 'BEGIN {
			printf "| %-11s | %-11s | %5d | %6d | %8.2f | %8.2f | %8.0f |", n, m, f, s, w, c, r / 1024
			if (bw == "-") printf "\n"; else printf " %9.2f | %9.0f |\n", bw, br / 1024 }'
	done
}

mkdir -p "$work/src"
cd "$work/src" || exit 1
cat > workers.js <<'JS'
const { Worker, isMainThread } = require('worker_threads');
if (isMainThread) {
	for (let i = 0; i < 4; i++) new Worker(__filename);
} else {
	let s = 0;
	for (let i = 0; i < 200000; i++) {
		const o = { a: i, b: 'x' + i, c: [i, i + 1], d: { e: String(i).repeat(3) } };
		s += JSON.parse(JSON.stringify(o)).c[1] + o.b.split('').reverse().join('').length;
	}
}
JS
mkdir -p proj
for f in one two three; do
	printf '#include <stdio.h>\nint %s(int x) { return x * %d; }\n' "$f" "${#f}" > "proj/$f.c"
done
printf 'int one(int), two(int), three(int);\nint main(void) { return one(1) + two(2) + three(3) - 19; }\n' > proj/main.c
cat > proj/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.13)
project(bench C)
add_executable(bench main.c one.c two.c three.c)
CM
cat > Hello.java <<'JAVA'
import java.util.*;
public class Hello {
	public static void main(String[] args) {
		Map<String, Integer> m = new HashMap<>();
		for (int i = 0; i < 200000; i++) m.merge("k" + (i % 1000), i, Integer::sum);
		System.out.println(m.size());
	}
}
JAVA

echo "mf_print: median of $reps runs of each report (wall and cpu seconds, peak RSS in MiB)"
echo
hdr="| profile     | report      | files | MiB    | wall (s) | cpu (s)  | RSS MiB  |"
sep="|-------------|-------------|-------|--------|----------|----------|----------|"
[ -n "$base" ] && hdr="$hdr base wall | base RSS  |" && sep="$sep-----------|-----------|"
echo "$hdr"
echo "$sep"
if want node; then
	if command -v node > /dev/null; then record node node workers.js && measure node
	else echo "| node        | (not installed: apt-get install nodejs) |"; fi
fi
if want cmake; then
	if command -v cmake > /dev/null && command -v ninja > /dev/null; then
		rm -rf build && record cmake sh -c 'cmake -G Ninja -S proj -B build && cmake --build build' &&
			measure cmake
	else echo "| cmake       | (not installed: apt-get install cmake ninja-build) |"; fi
fi
if want gcc; then
	record gcc gcc -O2 -g -c -o prog.o "$MF_SRC/tests/bench/bench_print_prog.c" && measure gcc
fi
if want ar; then
	gcc -c -o one.o proj/one.c
	if ls /usr/lib/bfd-plugins/LLVMgold*.so > /dev/null 2>&1; then
		record ar ar rcs libone.a one.o && measure ar
	else echo "| ar          | (no LLVM linker plugin: apt-get install llvm) |"; fi
fi
if want java; then
	if command -v javac > /dev/null; then
		javac Hello.java && record java java -cp . Hello && measure java
	else echo "| java        | (not installed: apt-get install default-jdk-headless) |"; fi
fi
if want threads1000; then
	record threads1000 "$prog" threads 1000 && measure threads1000
fi
if want stacks3m; then
	record stacks3m "$prog" stacks 3000000 && measure stacks3m
fi
