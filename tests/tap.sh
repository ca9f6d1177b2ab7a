# A tiny TAP helper for the shell tests (sourced). Environment from Makefile.am:
# MF_LIB (libmalloc_freq.so), MF_PRINT (mf_print), MF_TESTS (built test programs).
mf_n=0 mf_failed=0
plan() { echo "1..$1"; }
pass() { mf_n=$((mf_n + 1)); echo "ok $mf_n - $1"; }
fail() { mf_n=$((mf_n + 1)) mf_failed=$((mf_failed + 1)); echo "not ok $mf_n - $1"; }
# ok STATUS DESC: passes when STATUS is 0
ok() { if [ "$1" -eq 0 ]; then pass "$2"; else fail "$2"; fi; }
# is GOT WANT DESC
is() {
	if [ "$1" = "$2" ]; then pass "$3"; else
		fail "$3"
		printf '%s\n' "$1" | sed 's/^/#   got: /' | head -20
		printf '%s\n' "$2" | sed 's/^/#  want: /' | head -20
	fi
}
# like TEXT REGEX DESC (grep -E)
like() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then pass "$3"; else
		fail "$3"
		printf '%s\n' "$1" | sed 's/^/#   got: /' | head -20
		echo "#  want: /$2/"
	fi
}
# skip WHY: one check that cannot run here, counted and said (never passed silently)
skip() { mf_n=$((mf_n + 1)); echo "ok $mf_n # SKIP $1"; }
bail() { echo "Bail out! $*"; exit 99; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }

for v in MF_LIB MF_PRINT MF_TESTS; do
	eval "[ -n \"\${$v}\" ]" || bail "$v is not set (run through make check)"
done
[ -f "$MF_LIB" ] || bail "no library at $MF_LIB"
# The library's processor (its ELF header's e_machine). Where it is not this machine's (built
# for arm64 and run under qemu-user: make check-arm64), the machine's own programs (sh,
# python3, ...) cannot take it, and the cached walk is x86-64's only.
case $(od -An -j18 -N2 -tu2 "$MF_LIB" | tr -d ' ') in
62) mf_arch=x86_64 ;;
183) mf_arch=aarch64 ;;
*) mf_arch=unknown ;;
esac
# Where the library's processor keeps its shared libraries (Debian's multiarch folder), and
# the name apt gives a package of it: PKG here, PKG:arm64 for an arm64 library on x86-64.
mf_libdir=/usr/lib/$mf_arch-linux-gnu
# mf_package PKG: the package to install for the library's processor
mf_package() {
	if [ "$mf_arch" = "$(uname -m)" ]; then echo "$1"
	elif [ "$mf_arch" = aarch64 ]; then echo "$1:arm64"
	else echo "$1:$mf_arch"; fi
}
# native WHAT: true where the library is this machine's; else skips WHAT, saying why
native() {
	[ "$mf_arch" = "$(uname -m)" ] && return 0
	skip "$1: the library is $mf_arch's, this machine's programs $(uname -m)'s (emulated run)"
	return 1
}
# cached_walk WHAT: true where stacks can come from the cached walk; else skips WHAT
cached_walk() {
	case $mf_arch in x86_64 | aarch64) return 0 ;; esac
	skip "$1: no cached walk for $mf_arch: libunwind takes every stack"
	return 1
}

# A fresh directory for this test, removed at exit.
mf_work=$(mktemp -d "${TMPDIR:-/tmp}/mf_test.XXXXXX") || bail "mktemp failed"
trap 'rm -rf "$mf_work"' EXIT
# The rule cache starts empty in each test, and ~/.cache is left alone.
MALLOC_FREQ_CACHE="$mf_work/cache"
export MALLOC_FREQ_CACHE

# profile CMD...: runs CMD under the profiler with profiles in $mf_work
profile() { MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$@"; }
# within SECS CMD...: CMD, killed if it runs longer (SIGKILL 5 s after SIGTERM: a process
# that hangs with its signals blocked does not take SIGTERM), so a hang fails the test
within() { mf_secs=$1; shift; timeout -k 5 "$mf_secs" "$@"; }
# profile_within SECS CMD...: the same under the profiler (not timeout itself), with the
# libraries in $MF_AFTER, if any, preloaded after it
profile_within() {
	mf_secs=$1; shift
	timeout -k 5 "$mf_secs" env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB${MF_AFTER:+ $MF_AFTER}" "$@"
}

# rust_why: empty if rustc is there and runs, else why not (for a SKIP)
rust_why() {
	command -v rustc > /dev/null || { echo "rustc not installed (apt-get install rustc)"; return; }
	rustc --version > /dev/null 2> "$mf_work/rustc_version.err" ||
		echo "rustc cannot run: $(head -1 "$mf_work/rustc_version.err")"
}
# return_addresses BINARY REGEX [OBJDUMP OPTION...]: the return addresses (hex, one a line) of
# the calls made in BINARY's functions whose objdump header ("<name>:") matches REGEX. (objdump
# prints a call "call", or "callq" before binutils 2.36; AArch64's "bl".)
return_addresses() {
	ra_bin=$1 ra_re=$2
	shift 2
	objdump -d --no-show-raw-insn "$@" "$ra_bin" | MF_RA_RE="$ra_re" awk '
		/^[0-9a-f]+ <.*>:$/ { mine = ($0 ~ ENVIRON["MF_RA_RE"]); after = 0; next }
		mine && /^ *[0-9a-f]+:/ { a = $1; sub(":", "", a); if (after) print a; after = ($0 ~ /\t(callq?|bl)[ \t]/) }'
}
# calls FILE REGEX: the sum of the counts of collapsed lines whose stack matches REGEX
# (the pattern reaches awk through the environment: gawk, unlike mawk, reads escapes such as \[
# in a -v value and drops the backslash)
calls() { MF_CALLS_RE="$2" awk '{ n = $NF; sub(/ [0-9]+$/, ""); if ($0 ~ ENVIRON["MF_CALLS_RE"]) s += n } END { printf "%.0f\n", s }' "$1"; }
# lives FILE SITE: the lifetime histogram lines, in FILE (mf_print --histogram -t 0), of the
# stack through SITE, as "range=count;"
lives() {
	awk -v s="<- $2 " 'index($0, "<- ") && $1 ~ /^[0-9]+$/ { on = index($0, s) > 0; life = 0; next }
		on && /lifetimes of its freed blocks/ { life = 1; next }
		on && life && NF >= 3 { n = $(NF - 1); line = $0; sub(/^ */, "", line); sub(/  #.*/, "", line); printf "%s=%s;", line, n }' "$1"
}
# sum RANGES: the total of the counts in lives's "range=count;" list
sum() { printf '%s' "$1" | tr ';' '\n' | awk -F= '{ s += $2 } END { printf "%.0f", s }'; }
# life_profile LABEL CMD...: CMD run under the profiler with lifetimes; checks that it exits 0
# (as "LABEL exits 0"), and leaves its profile directory in $d, its leaked blocks by stack in
# $mf_work/leaked (collapsed) and its histograms in $mf_work/hist (for lives)
life_profile() {
	mf_label=$1; shift
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_LIFETIMES=1 profile_within 120 "$@"
	is "$?" 0 "$mf_label exits 0"
	d=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
	"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/leaked"
	"$MF_PRINT" --histogram -t 0 $d > "$mf_work/hist"
}
# accounted DIR...: the calls mf_print accounts for in DIR: the summary's total, or the calls
# it says the threads saw ("N of M calls ..."), whichever is larger
accounted() {
	"$MF_PRINT" "$@" 2> /dev/null | awk 'NR == 1 { n = $2; sub(/^~/, "", n) }
		/^  [0-9]+ of [0-9]+ calls/ && $3 + 0 > n + 0 { n = $3 }
		END { printf "%.0f\n", n }'
}
# thread_tids DIR: the tids of process directory DIR's threads, one a line: of its <tid>.prof
# files and of the records a snapshot packed into its ended.pack (each 96 bytes, the lengths
# of the header and the nodes that follow at its bytes 24 and 32; the tid at byte 40 of the
# header)
thread_tids() {
	ls "$1" | sed -n 's/^\([0-9]*\)\(\.[0-9]*\)\{0,1\}\.prof$/\1/p'
	[ -f "$1/ended.pack" ] || return 0
	mf_pack_size=$(stat -c %s "$1/ended.pack") mf_at=0
	while [ "$mf_at" -lt "$mf_pack_size" ]; do
		set -- "$1" $(od -An -tu8 -j$((mf_at + 24)) -N16 "$1/ended.pack")
		od -An -tu8 -j$((mf_at + 136)) -N8 "$1/ended.pack" | tr -d ' '
		mf_at=$((mf_at + 96 + $2 + $3))
	done
}
# done_testing: the plan, printed last (TAP allows it at the end)
done_testing() { echo "1..$mf_n"; }
