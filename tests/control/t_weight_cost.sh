#!/bin/sh
# MALLOC_FREQ_WEIGHT=time charges a stack the program's CPU time, not the profiler's
# (tests/progs/prog_weight_cost.c): site_loop is reached after each of many short pieces of work,
# site_ref once after the same pieces without the calls between them. Their charged times
# stand as the program's own CPU times in the two phases do when run plain (ratios: a loaded
# machine slows both alike), within 10 %. Threads and a forked child are each charged their
# own time: a site after a long piece of work is charged its CPU time, within 10 %.
. "$srcdir/tests/tap.sh"
n=100000 u=300
# ratio A B: A / B in thousandths
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d\n", (b > 0 ? a * 1000 / b : 0) }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
charged() { "$MF_PRINT" --collapsed --time "$1" 2> /dev/null > "$mf_work/t"; calls "$mf_work/t" ";$2;malloc\$"; }
: > "$mf_work/plain"; : > "$mf_work/prof"
for i in 1 2 3; do # (interleaved: the machine's load changes both alike)
	within 120 "$MF_TESTS/prog_weight_cost" $n $u | awk '{ print $2, $4 }' > "$mf_work/o" ||
		bail "prog_weight_cost fails plain"
	read -r loop ref < "$mf_work/o"; ratio "$loop" "$ref" >> "$mf_work/plain"
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_WEIGHT=time profile_within 120 "$MF_TESTS/prog_weight_cost" $n $u > /dev/null ||
		bail "prog_weight_cost fails profiled"
	dir=$(ls -d "$mf_work"/malloc_freq.*)
	ratio "$(charged "$dir" site_loop)" "$(charged "$dir" site_ref)" >> "$mf_work/prof"
done
plain=$(median < "$mf_work/plain") prof=$(median < "$mf_work/prof")
d=$((prof * 1000 / plain - 1000))
# (under qemu-user a thread's CPU time includes qemu translating the code it meets first)
emulated="under qemu-user, CPU time includes translating the code"
if native "site_loop / site_ref charged as plain ($emulated)"; then
	[ "${d#-}" -le 100 ]
	ok $? "site_loop / site_ref charged $prof/1000, plain $plain/1000 (medians of 3): within 10 %"
fi
# 2 threads and a forked child: each process's site_ref holds its threads' CPU time in that
# phase; site_loop stands to it as plain, and holds at most the CPU time its phase took
# (medians of 3 runs, as above: one run on a loaded machine can be off by a third)
: > "$mf_work/refs"; : > "$mf_work/both"; : > "$mf_work/loops"; : > "$mf_work/family"
for i in 1 2 3; do
	rm -rf "$mf_work"/malloc_freq.*
	out=$(MALLOC_FREQ_WEIGHT=time profile_within 120 "$MF_TESTS/prog_weight_cost" $((n / 2)) $u 2 1)
	rc=$?
	[ $i -gt 1 ] || is "$rc:$(echo "$out" | wc -l)" "0:3" "2 threads and a forked child: each says its times"
	[ $i -gt 1 ] || is "$(ls -d "$mf_work"/malloc_freq.* | wc -l)" 2 "two processes recorded"
	loops=$(echo "$out" | awk '{ s += $2 } END { printf "%.0f\n", s }')
	refs=$(echo "$out" | awk '{ s += $4 } END { printf "%.0f\n", s }')
	l=0 r=0
	for dir in "$mf_work"/malloc_freq.*; do
		l=$((l + $(charged "$dir" site_loop))) r=$((r + $(charged "$dir" site_ref)))
		threads=$(ls "$dir"/*.prof | wc -l)
		if [ "$threads" -eq 3 ]; then parent=$(charged "$dir" site_ref); else child=$(charged "$dir" site_ref); fi
	done
	echo "$(ratio "$r" "$refs") $r $refs" >> "$mf_work/refs"
	echo "$(ratio "$l" "$r")" >> "$mf_work/both"
	echo "$(ratio "$l" "$loops") $l $loops" >> "$mf_work/loops"
	echo "$(ratio "$parent" "$child") $parent $child" >> "$mf_work/family"
done
m=$(median < "$mf_work/refs") d=$((m - 1000))
if native "site_ref in all, and site_loop / site_ref in all ($emulated)"; then
	[ "${d#-}" -le 100 ]
	ok $? "site_ref in all: the threads' CPU time in that phase within 10 % (charged/CPU $m/1000, median of 3: $(cut -d' ' -f2- "$mf_work/refs" | paste -sd,) ns)"
	both=$(median < "$mf_work/both") d=$((both * 1000 / plain - 1000)) lm=$(median < "$mf_work/loops")
	[ "${d#-}" -le 100 ] && [ "$lm" -le 1000 ]
	ok $? "site_loop / site_ref in all $both/1000 (plain $plain/1000) within 10 %, site_loop at most its phase's CPU time ($lm/1000; medians of 3)"
fi
f=$(median < "$mf_work/family")
[ "$f" -ge 1400 ] && [ "$f" -le 2600 ]
ok $? "the parent (2 threads) is charged about twice the child's ($f/1000, median of 3)"
done_testing
