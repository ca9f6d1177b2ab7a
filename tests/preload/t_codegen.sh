#!/bin/sh
# One program (tests/progs/codegen.c: sites through a wrapper and a few call depths, counts known by
# construction) built by gcc and clang with each common code-generation flag set: frame
# pointers, CET's endbr64 markers, stack-clash probes, PIE and not. Each runs as without the
# profiler, its report has each site's exact count, and MALLOC_FREQ_UNWIND=check finds every
# stack the same both ways. A static-pie build cannot take a preloaded library: the launcher
# says so. A Go program calling C (cgo) has its C site's exact count. For an arm64 library
# under emulation (make check-arm64) the programs are built by the cross compiler, with
# pointer authentication and BTI (-mbranch-protection=standard) in place of CET's markers, the
# static-pie one too, and the Go one by go for GOARCH=arm64 with the cross compiler for its C.
. "$srcdir/tests/tap.sh"
if [ "$mf_arch" = "$(uname -m)" ]; then
	compilers="gcc clang" goenv="" objdump=objdump
elif [ "$mf_arch" = aarch64 ] && command -v aarch64-linux-gnu-gcc > /dev/null; then
	compilers=aarch64-linux-gnu-gcc goenv="GOARCH=arm64 CC=aarch64-linux-gnu-gcc"
	objdump=aarch64-linux-gnu-objdump
else
	skip_all "the library is $mf_arch's, and this machine's compilers build $(uname -m)'s programs (emulated run)"
fi
case $mf_arch in
aarch64) protection=-mbranch-protection=standard ;;
*) protection=-fcf-protection ;;
esac
launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
[ -x "$launcher" ] || bail "no launcher at $launcher"
src=$srcdir/tests/progs/codegen.c
n=1000

# run_checked LABEL BIN ARGS...: the same output and status as without the profiler; no stack
# found different by the check (its summary at exit in $summary); the report in $mf_work/c.txt.
# With past_end set, a stack libunwind ended where the cached walk went on, to a return address
# (just after a bl or blr in BIN), is not a difference: on arm64 libunwind ends a stack at
# code with no unwind table (Go's assembly), where the walk follows the frame records.
run_checked() {
	label=$1; shift
	rm -rf "$mf_work"/malloc_freq.*
	"$@" > "$mf_work/plain.out" 2> /dev/null; prc=$?
	MALLOC_FREQ_UNWIND=check profile_within 60 "$@" > "$mf_work/check.out" 2> "$mf_work/check.err"; rc=$?
	is "$rc:$(cat "$mf_work/check.out")" "$prc:$(cat "$mf_work/plain.out")" "$label: same output and status as without the profiler"
	grep 'unwind check: \(frame\|hot\)' "$mf_work/check.err" > "$mf_work/differ" 2> /dev/null
	if [ -n "$past_end" ]; then
		past=0
		: > "$mf_work/differ.kept"
		while IFS= read -r line; do
			# "frame F differs: cached walk ADDR (of A frames), libunwind 0 (of F)"
			addr=$(printf '%s\n' "$line" | sed -n 's/.*frame \([0-9]*\) differs: cached walk \([0-9a-f]*\) (of [0-9]* frames), libunwind 0 (of \1)$/\2/p')
			if [ -n "$addr" ] && $objdump -d --start-address=$((0x$addr - 4)) \
				--stop-address=$((0x$addr)) "$1" | grep -Eq '[[:space:]]blr?[[:space:]]'; then
				past=$((past + 1))
			else
				printf '%s\n' "$line" >> "$mf_work/differ.kept"
			fi
		done < "$mf_work/differ"
		mv "$mf_work/differ.kept" "$mf_work/differ"
		echo "# $label: $past stacks libunwind ended where the cached walk went on to a caller"
	fi
	is "$(wc -l < "$mf_work/differ")" 0 "$label: no stack differs from libunwind's"
	head -5 "$mf_work/differ" | sed 's/^/# /'
	summary=$(grep 'unwind check: .* stacks compared' "$mf_work/check.err" | head -1 | sed 's/.*check: //')
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> "$mf_work/print.err"
}

# sites LABEL: codegen's four sites, each with its count (the stack from main to the allocator)
sites() {
	got=""
	for s in "site_direct;wrap_malloc;malloc" "site_deep;deep_2;deep_1;wrap_malloc;malloc" \
		"site_calloc;calloc" "site_big;wrap_malloc;malloc"; do
		got="$got $(calls "$mf_work/c.txt" ";main;$s\$")"
	done
	is "$got" " $n $((2 * n)) $((3 * n)) $((4 * n))" "$1: each site's exact count"
}

# libunwind_signed BIN: does libunwind take BIN's stacks whole (its site_direct's count exact)?
# Its report in $mf_work/lu.txt.
libunwind_signed() {
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_UNWIND=libunwind profile_within 60 "$1" $n > /dev/null 2>&1
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/lu.txt" 2> /dev/null
	[ "$(calls "$mf_work/lu.txt" ';main;site_direct;wrap_malloc;malloc$')" = "$n" ]
}

for cc in $compilers; do
	if ! command -v $cc > /dev/null; then
		skip "$cc: not installed (apt-get install $cc)"
		continue
	fi
	for flags in "" "-fno-omit-frame-pointer" "$protection" "-fstack-clash-protection" \
		"-fPIE -pie" "-fno-pie -no-pie"; do
		label="$cc -O2${flags:+ $flags}"
		bin=$mf_work/codegen
		# shellcheck disable=SC2086 # (the flags split into words)
		if ! $cc -O2 -g $flags -o "$bin" "$src" 2> "$mf_work/cc.err"; then
			fail "$label: builds"
			sed 's/^/# /' "$mf_work/cc.err" | head -5
			continue
		fi
		if [ "$flags" = -mbranch-protection=standard ] && ! libunwind_signed "$bin"; then
			# libunwind (1.6) steps over no frame whose return address is signed: its
			# stacks end there, and check mode, which compares with them, cannot hold (and
			# is slow: libunwind fails each stack; so a short run)
			MALLOC_FREQ_UNWIND=check profile_within 300 "$bin" 20 > /dev/null 2> "$mf_work/check.err"
			walked=$(sed -n 's/.*unwind check: \([0-9]*\) stacks compared, \([0-9]*\) by the cached walk.*/\1 \2/p' "$mf_work/check.err")
			[ -n "$walked" ] && [ "${walked% *}" = "${walked#* }" ]
			ok $? "$label: every stack from the cached walk (stacks compared, by the walk: ${walked:-none})"
			skip "$label: check mode: libunwind here ends its stacks at the first signed return address ($(calls "$mf_work/lu.txt" ';main;site_direct;wrap_malloc;malloc$') of site_direct's $n calls whole)"
			rm -rf "$mf_work"/malloc_freq.*
			profile_within 60 "$bin" $n > /dev/null 2>&1
			"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> "$mf_work/print.err"
		else
			run_checked "$label" "$bin" $n
			like "$summary" "^[0-9]+ stacks compared, [0-9]+ by the cached walk, 0 differed" "$label: check mode's summary: 0 differed"
		fi
		sites "$label"
	done
done

# static-pie: no dynamic loader, so no LD_PRELOAD. The program runs unchanged; the launcher
# says that it is static and that nothing in it can be recorded.
bin=$mf_work/codegen_static
static_cc=${compilers%% *}
if ! $static_cc -O2 -g -static-pie -o "$bin" "$src" 2> "$mf_work/cc.err"; then
	skip "$static_cc -static-pie: cannot build here ($(head -1 "$mf_work/cc.err"))"
else
	"$bin" $n > "$mf_work/plain.out"; prc=$?
	rm -rf "$mf_work"/malloc_freq.*
	profile "$bin" $n > "$mf_work/pre.out" 2> "$mf_work/pre.err"; rc=$?
	is "$rc:$(cat "$mf_work/pre.out")" "$prc:$(cat "$mf_work/plain.out")" "$static_cc -static-pie under LD_PRELOAD: runs as without the profiler"
	ls -d "$mf_work"/malloc_freq.* > /dev/null 2>&1
	is "$?:$(cat "$mf_work/pre.err")" "2:" "... and leaves nothing (the library is never loaded, so it cannot say why)"
	(cd "$mf_work" && "$launcher" "$bin" $n > "$mf_work/launch.out" 2> "$mf_work/launch.err"); rc=$?
	is "$rc:$(cat "$mf_work/launch.out")" "$prc:$(cat "$mf_work/plain.out")" "$static_cc -static-pie under the launcher: runs as without the profiler"
	like "$(cat "$mf_work/launch.err")" "^malloc_freq: nothing recorded in .*: $bin is statically linked, and the profiler cannot be preloaded into it" \
		"... and the launcher says the program is static, so nothing it allocates is recorded"
fi

# Go calling C: the C site's calls exact. (A Go program ends by an exit_group of its own, not
# libc's exit: the check's summary, said at exit, is not written.)
if ! command -v go > /dev/null; then
	skip "Go (cgo): go not installed (apt-get install golang-go)"
else
	mkdir "$mf_work/go" && cp "$srcdir/tests/progs/codegen_cgo.go" "$mf_work/go/main.go" &&
		printf 'module codegen\n\ngo 1.19\n' > "$mf_work/go/go.mod"
	# shellcheck disable=SC2086 # (goenv: the cross build's GOARCH and CC, or nothing)
	if ! (cd "$mf_work/go" && GOFLAGS=-mod=mod GOCACHE="$mf_work/gocache" GOPATH="$mf_work/gopath" \
		GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 env $goenv go build -o "$mf_work/codegen_go" .) \
		> "$mf_work/go.err" 2>&1; then
		skip "Go (cgo): go build fails here: $(head -1 "$mf_work/go.err")"
	else
		# (emulated, libunwind takes some 8 ms for each stack of a Go program: fewer calls)
		gon=$n
		[ -n "$goenv" ] && gon=200
		past_end=$goenv
		run_checked "Go (cgo)" "$mf_work/codegen_go" $gon
		past_end=""
		is "$(calls "$mf_work/c.txt" ';site_cgo;malloc$')" $((3 * gon)) "Go (cgo): the C site's exact count"
	fi
fi
# (the Go module cache is read-only: rm -rf alone cannot take it)
chmod -R u+w "$mf_work" 2> /dev/null
done_testing
