#!/bin/sh
# MALLOC_FREQ_SAMPLE=100: estimates of every site with >= 1% of the calls within +-5% of the
# exact counts (known by construction), for several fixed seeds; a periodic call pattern must
# not alias. 200M calls: the 1% site gets ~20000 samples, so +-5% is ~7 standard deviations.
. "$srcdir/tests/tap.sh"
threads=2 rounds=1000000
total=$((threads * rounds * 100))
for seed in 1 2 3; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_SAMPLE=100 MALLOC_FREQ_SEED=$seed profile "$MF_TESTS/prog_sample" $threads $rounds
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
	"$MF_PRINT" --collapsed --bytes "$mf_work"/malloc_freq.* > "$mf_work/b.txt"
	for p in 1 4 15 30 50; do
		want=$((total / 100 * p))
		size=$(case $p in 1) echo 100;; 4) echo 200;; 15) echo 300;; 30) echo 400;; 50) echo 500;; esac)
		got=$(calls "$mf_work/c.txt" ";site_p$p;malloc\$")
		gotb=$(calls "$mf_work/b.txt" ";site_p$p;malloc\$")
		if awk -v g="$got" -v w="$want" -v gb="$gotb" -v wb="$((want * size))" \
			'BEGIN { exit !(g >= w * 0.95 && g <= w * 1.05 && gb >= wb * 0.95 && gb <= wb * 1.05) }'; then
			pass "seed $seed: site_p$p ($p%) estimated $got calls, exact $want (bytes $gotb, exact $((want * size)))"
		else
			fail "seed $seed: site_p$p ($p%) estimated $got calls, exact $want (bytes $gotb, exact $((want * size)))"
		fi
	done
	like "$("$MF_PRINT" "$mf_work"/malloc_freq.*)" "^malloc_freq: ~[0-9]+ calls.*
.*
  estimates: some files were sampled" "seed $seed: the report says its counts are estimates"
done
# so do --collapsed (on stderr: its lines are flamegraph.pl's) and --dot (in its title)
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* 2> "$mf_work/err" > /dev/null
like "$(cat "$mf_work/err")" "^mf_print: the counts are estimates: some files were sampled" "--collapsed says on stderr that its counts are estimates"
like "$("$MF_PRINT" --dot "$mf_work"/malloc_freq.* 2> /dev/null | grep 'graph \[')" 'label="malloc_freq: ~[0-9]+ calls .* requested \(estimates: sampled' "--dot's title says ~ and estimates"
# In a directory of an exact run and a sampled one, --processes and --threads say which rows
# are estimates (~), as the summary marks them
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_sample" 1 1000
MALLOC_FREQ_SAMPLE=10 profile "$MF_TESTS/prog_sample" 1 1000
"$MF_PRINT" --processes "$mf_work" > "$mf_work/p.txt" 2> /dev/null
is "$(grep -cE '^ +~[0-9]+ .*\[prog_sample\]' "$mf_work/p.txt"):$(grep -cE '^ +100001 .*\[prog_sample\]' "$mf_work/p.txt")" 1:1 \
	"--processes: the sampled run's calls marked ~, the exact run's 100001 not"
"$MF_PRINT" --threads "$mf_work" > "$mf_work/t.txt" 2> /dev/null
marked=$(grep 'pid/tid$' "$mf_work/t.txt" | grep -o ' ~[0-9]*/[0-9]*' | wc -l)
plain=$(grep 'pid/tid$' "$mf_work/t.txt" | grep -o ' [0-9]*/[0-9]*' | wc -l)
[ "$marked" -ge 1 ] && [ "$plain" = 2 ]; ok $? "--threads: the sampled run's threads headed ~pid/tid ($marked), the exact run's two not ($plain)"

# With a seed, forked children sample apart (the same seed's stream in each, they read alike),
# and a second run of the same seed samples as the first: 4 threads fork 5 children each,
# each child makes 100 calls, one in 10 sampled.
for run in 1 2; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_SAMPLE=10 MALLOC_FREQ_SEED=5 profile "$MF_TESTS/prog_spawn" storm 5
	for d in "$mf_work"/malloc_freq.*; do
		"$MF_PRINT" --collapsed "$d" 2> /dev/null > "$mf_work/c.txt"
		[ -n "$(grep ';site_child;malloc ' "$mf_work/c.txt")" ] && calls "$mf_work/c.txt" ';site_child;malloc$'
	done | sort -n > "$mf_work/run$run"
done
n=$(wc -l < "$mf_work/run1") distinct=$(sort -u "$mf_work/run1" | wc -l)
[ "$n" = 20 ] && [ "$distinct" -ge 4 ]; ok $? "MALLOC_FREQ_SEED: 20 forked children, $distinct different estimates ($(tr '\n' ' ' < "$mf_work/run1"))"
is "$(cat "$mf_work/run2")" "$(cat "$mf_work/run1")" "MALLOC_FREQ_SEED: the same estimates again in a second run"
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_SAMPLE=abc profile "$MF_TESTS/prog_sample" 1 1000 2> "$mf_work/err"
is "$(cat "$mf_work/err")" 'malloc_freq: MALLOC_FREQ_SAMPLE="abc" is not a whole number from 1 to 1000000000; recording every call' "a bad MALLOC_FREQ_SAMPLE is named on stderr, once"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
is "$(calls "$mf_work/c.txt" ';site_p1;malloc$')" 1000 "... and every call is recorded exactly"
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_SAMPLE=1 profile "$MF_TESTS/prog_sample" 1 1000
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
is "$(calls "$mf_work/c.txt" ';site_p50;malloc$')" 50000 "MALLOC_FREQ_SAMPLE=1 records every call"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* 2> "$mf_work/err" > /dev/null
is "$(cat "$mf_work/err")" "" "... and --collapsed says nothing of estimates then"
done_testing
