#!/bin/sh
# MALLOC_FREQ_WEIGHT=time (tests/progs/prog_weight.c): each recorded call charges its stack with the
# thread's CPU time since the previous one. A site reached after W ms of CPU work, N times,
# holds about N x W ms; the one right after it next to nothing; the sum is the thread's CPU
# time; not scaled by sampling; --sort time and --collapsed --time; no time, no report by it.
. "$srcdir/tests/tap.sh"
n=20 w=5
out=$(MALLOC_FREQ_WEIGHT=time profile_within 60 "$MF_TESTS/prog_weight" $n $w); is "$?" 0 "exits 0"
cpu=$(echo "$out" | awk '{ print $2 }')
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --collapsed --time "$dir" > "$mf_work/t" 2> /dev/null; ok $? "--collapsed --time"
slow=$(calls "$mf_work/t" ';site_slow;malloc$') fast=$(calls "$mf_work/t" ';site_fast;malloc$')
all=$(calls "$mf_work/t" '.')
[ "$slow" -ge $((n * w * 1000000)) ] && [ "$slow" -le "$cpu" ]
ok $? "site_slow holds at least $n x $w ms and at most the thread's CPU time ($slow ns of $cpu)"
# (under qemu-user a thread's CPU time includes qemu translating each piece of code it meets
# first, the profiler's more than the program's: the shares below are not the program's there)
emulated="under qemu-user, CPU time includes translating the code"
if native "site_fast's share ($emulated)"; then
	[ $((fast * 100)) -lt "$slow" ]; ok $? "site_fast, right after it, under 1% of that ($fast ns)"
fi
[ "$all" -le "$cpu" ]; ok $? "all stacks together: at most the thread's CPU time ($all of $cpu ns)"
if native "all stacks' share of the thread's CPU time ($emulated)"; then
	[ $((all * 10)) -ge $((cpu * 9)) ]
	ok $? "all stacks together: the thread's CPU time less the profiler's, at least 90% ($all of $cpu ns)"
fi
"$MF_PRINT" --collapsed "$dir" > "$mf_work/c" 2> /dev/null
is "$(calls "$mf_work/c" ';site_slow;malloc$') $(calls "$mf_work/c" ';site_fast;malloc$')" "$n $n" \
	"calls are still counted: $n and $n"
report=$("$MF_PRINT" --sort time --threshold 5 "$dir" 2> /dev/null)
like "$report" "s of thread CPU time came before these calls" "the summary says how much time"
like "$report" "cpu ms    temp  call stack" "the tree has a time column (then temporaries)"
like "$report" "^ +$n +[0-9.]+% .* \|- site_slow " "--sort time: site_slow first"
# the other outputs carry the time: JSON (parsed by python3), pprof (read by go tool pprof)
if command -v python3 > /dev/null; then
	"$MF_PRINT" --json "$dir" 2> /dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(" ".join(d["metrics"]), d["summary"]["total"]["time"])' > "$mf_work/json"
	is "$(cat "$mf_work/json")" "calls bytes time temporary $all" "--json: a time metric (after calls and bytes, before temporaries), its total the same"
else
	pass "# SKIP no python3"
fi
if go version > /dev/null 2>&1; then
	"$MF_PRINT" --pprof "$mf_work/p.pb.gz" --collapsed "$dir" > /dev/null 2>&1
	like "$(go tool pprof -sample_index=cpu -top "$mf_work/p.pb.gz" 2> /dev/null)" "^Type: cpu$" \
		"--pprof: a cpu sample type go tool pprof reads"
else
	pass "# SKIP no go tool pprof"
fi
# sampled: each recorded call carries all the time since the one before: not scaled
rm -rf "$mf_work"/malloc_freq.*
out=$(MALLOC_FREQ_WEIGHT=time MALLOC_FREQ_SAMPLE=4 MALLOC_FREQ_SEED=3 profile_within 60 "$MF_TESTS/prog_weight" 100 1)
cpu=$(echo "$out" | awk '{ print $2 }')
"$MF_PRINT" --collapsed --time "$mf_work"/malloc_freq.* > "$mf_work/t" 2> /dev/null
all=$(calls "$mf_work/t" '.')
[ "$all" -le "$cpu" ]; ok $? "sampled 1 in 4: at most the thread's CPU time ($all of $cpu ns)"
if native "sampled 1 in 4: the share of the thread's CPU time ($emulated)"; then
	[ $((all * 10)) -ge $((cpu * 8)) ]
	ok $? "sampled 1 in 4: the time is not scaled, at least 80% of the thread's ($all of $cpu ns)"
fi
# without time
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_weight" 2 0 > /dev/null
"$MF_PRINT" --sort time "$mf_work"/malloc_freq.* > /dev/null 2> "$mf_work/err"; rc=$?
is "$rc:$(cat "$mf_work/err")" "1:mf_print: these profiles hold no time: record with malloc_freq --weight time, or MALLOC_FREQ_WEIGHT=time, for --sort time and --collapsed --time" \
	"--sort time without time: said, exit 1"
like "$("$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null)" "^       calls       %       bytes    temp  call stack" \
	"and the tree has no time column"
err=$(MALLOC_FREQ_WEIGHT=cpu profile "$MF_TESTS/prog_weight" 1 0 2>&1 > /dev/null)
is "$err" 'malloc_freq: MALLOC_FREQ_WEIGHT="cpu" is not one of calls, time; using calls' \
	"MALLOC_FREQ_WEIGHT=cpu: one line on stderr"
done_testing
