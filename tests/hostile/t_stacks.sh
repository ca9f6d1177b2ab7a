#!/bin/sh
# The profiler's use of the program's stack is small and bounded on every path: coroutines on
# 4 and 8 KiB stacks and signal handlers on 8 KiB (the legacy SIGSTKSZ), 12 KiB and
# MINSIGSTKSZ-sized alternate stacks (the kernel's signal frame and the legacy 2 KiB) allocate
# through new call paths, each stack with a guard page below it; and what a new thread's first
# calls, calls from known paths and a signal handler's calls take of a stack, measured on a
# painted one, exceeds the plain run's by at most 1 KiB.
. "$srcdir/tests/tap.sh"
prog="$MF_TESTS/prog_stacks"
# small DESC SITE COUNT ARGS...: plain and profiled runs print the same and exit 0, and the
# profile has COUNT calls from SITE
small() {
	desc=$1 site=$2 count=$3; shift 3
	want=$(within 20 "$prog" "$@"); prc=$?
	rm -rf "$mf_work"/malloc_freq.*
	got=$(profile_within 20 "$prog" "$@" 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "$prc:$want" "$desc: runs as without the profiler (status $prc)"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ";$site;malloc\$")" "$count" "... and its $count calls are recorded"
}
for size in 4096 8192; do
	for run in 1 2; do
		small "4 coroutines on $size-byte stacks, run $run" site_coro 200 coro $size 50
	done
done
for size in 8192 12288 min; do
	[ $size = min ] && what="MINSIGSTKSZ-sized" || what="$size-byte"
	small "a signal handler on a $what alternate stack" site_handler 50 alt $size 50
done

# bytes BYTES-LINE NAME: the number after NAME
bytes() { printf '%s\n' "$1" | sed -n "s/.*$2: \\([0-9]*\\) bytes.*/\\1/p"; }
plain=$(within 20 "$prog" used 50)
rm -rf "$mf_work"/malloc_freq.*
prof=$(MALLOC_FREQ_TIMELINE=0.01 profile_within 20 "$prog" used 50)
for what in first again handler; do
	p=$(bytes "$plain" $what) q=$(bytes "$prof" $what)
	[ -n "$p" ] && [ -n "$q" ] && [ $((q - p)) -le 1024 ]
	ok $? "stack used by $what calls: ${q:-?} bytes profiled, ${p:-?} plain: at most 1 KiB more"
done
# The timeline's looks from known paths, one of which reserves the header's room (a slow
# step, which runs on the thread's own stack), take what known paths take, give or take 256
a=$(bytes "$prof" again) q=$(bytes "$prof" timeline)
[ -n "$a" ] && [ -n "$q" ] && [ "$q" -le $((a + 256)) ]
ok $? "stack used by calls whose timeline reserves its room: ${q:-?} bytes, known paths ${a:-?}: at most 256 more"
if command -v python3 > /dev/null 2>&1; then
	n=$("$MF_PRINT" --json "$mf_work"/malloc_freq.* 2> /dev/null | python3 -c 'import json, sys
print(max(len(p["timeline"]["points"]) for p in json.load(sys.stdin)["processes"] if p["timeline"]))')
	[ "${n:-0}" -ge 17 ]
	ok $? "... and the timeline kept records past the header's first page (14): ${n:-?} points"
else
	skip "no python3 (it reads the timeline's points in --json)"
fi
done_testing
