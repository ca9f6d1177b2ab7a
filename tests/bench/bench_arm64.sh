#!/bin/sh
# make bench-arm64: the profiler's cost per recorded call on arm64, in instructions, where this
# machine cannot time arm64 code: each one-thread workload runs under qemu-user with a plugin
# that counts the emulated instructions (tests/bench/qemu_insn.c), plain and under the arm64
# library, at two lengths; the difference of the two lengths' counts, less the plain run's, over
# the difference of their recorded calls (read from the profiles by mf_print) is what the
# profiler adds to a call, the start and the end of a run left out. Workloads: bench_alloc (one
# thread, four sites 5 to 20 frames deep; also with MALLOC_FREQ_UNWIND=libunwind) and the stack
# shapes of bench_shapes; then check mode's verdict on bench_shapes' mix.
# Environment: MF_ARM64_LIB (the arm64 library), MF_PRINT (this machine's mf_print), MF_SRC (the
# source dir), CC (this machine's compiler, for the plugin). Needs Debian's qemu-user (its
# dynamic qemu-aarch64 takes plugins; qemu-user-static's does not) and gcc-aarch64-linux-gnu.
# With the argument "tools", only says whether they are there (make checks before it builds).
set -u
qemu=/usr/bin/qemu-aarch64
cross=aarch64-linux-gnu-gcc
for tool in "$qemu" "$cross"; do
	command -v "$tool" > /dev/null ||
		{ echo "bench-arm64: no $tool (apt-get install qemu-user gcc-aarch64-linux-gnu)"; exit 1; }
done
[ "${1:-}" != tools ] || exit 0
work=$(mktemp -d "${TMPDIR:-/tmp}/mf_bench_arm64.XXXXXX")
trap 'rm -rf "$work"' EXIT
${CC:-cc} -O2 -shared -fPIC -o "$work/insn.so" "$MF_SRC/tests/bench/qemu_insn.c" || exit 1
for prog in bench_alloc bench_shapes; do
	"$cross" -O2 -g -pthread -o "$work/$prog" "$MF_SRC/tests/bench/$prog.c" || exit 1
done
MALLOC_FREQ_CACHE=$work/cache
export MALLOC_FREQ_CACHE
if ! "$qemu" -plugin "$work/insn.so" -d plugin "$work/bench_alloc" 1 1 2> "$work/probe" > /dev/null ||
	! grep -q '^insns [1-9]' "$work/probe"; then
	echo "bench-arm64: $qemu does not count instructions with the plugin:"
	cat "$work/probe"
	exit 1
fi

# insns SETTING PRELOAD CMD...: the instructions CMD runs (with PRELOAD, if not empty,
# preloaded, and the environment SETTING, VAR=VALUE, if not empty), its recorded calls after a
# space (0 without a preload); 0 0 if CMD failed
insns() {
	setting=$1 pre=$2
	shift 2
	rm -rf "$work/out" && mkdir "$work/out"
	n=0
	if env MALLOC_FREQ_DIR="$work/out" $setting "$qemu" ${pre:+-E} ${pre:+"LD_PRELOAD=$pre"} \
		-plugin "$work/insn.so" -d plugin "$@" 2> "$work/log" > /dev/null; then
		n=$(awk '$1 == "insns" { print $2 }' "$work/log")
	fi
	calls=0
	if [ -n "$pre" ]; then
		calls=$("$MF_PRINT" "$work"/out/malloc_freq.* 2> /dev/null | awk 'NR == 1 { print $2 }')
	fi
	echo "${n:-0} ${calls:-0}"
}

# row NAME SETTING SHORT LONG CMD...: CMD with SHORT and then LONG appended, plain and
# profiled (with SETTING)
row() {
	name=$1 setting=$2 short=$3 long=$4
	shift 4
	p1=$(insns "" "" "$@" "$short") p2=$(insns "" "" "$@" "$long")
	# (a first run fills the rule cache: the two measured start alike, and their difference
	# is the calls' alone)
	insns "$setting" "$MF_ARM64_LIB" "$@" "$short" > /dev/null
	f1=$(insns "$setting" "$MF_ARM64_LIB" "$@" "$short")
	f2=$(insns "$setting" "$MF_ARM64_LIB" "$@" "$long")
	echo "$name $p1 $p2 $f1 $f2" | awk '{
		calls = $9 - $7
		if (calls <= 0 || $2 == 0 || $4 == 0 || $6 == 0 || $8 == 0) { printf "%-22s (not measured: a run failed)\n", $1; exit }
		plain = ($4 - $2) / calls; added = ($8 - $6) / calls - plain
		printf "%-22s %10d %12.0f %12.0f\n", $1, calls, plain, added }'
}

echo "arm64 under qemu-user: emulated instructions per recorded call"
printf '%-22s %10s %12s %12s\n' workload calls plain added
row synthetic "" 20000 40000 "$work/bench_alloc" 1
row synthetic-libunwind MALLOC_FREQ_UNWIND=libunwind 2000 4000 "$work/bench_alloc" 1
for shape in wrapper4 wrapper16 unrolled depth3 depth30 recursive; do
	row "$shape" "" 20000 40000 "$work/bench_shapes" "$shape"
done
rm -rf "$work/out" && mkdir "$work/out"
MALLOC_FREQ_DIR=$work/out MALLOC_FREQ_UNWIND=check "$qemu" -E LD_PRELOAD="$MF_ARM64_LIB" \
	"$work/bench_shapes" mix 20000 2>&1 > /dev/null | grep 'unwind check'
