#!/bin/sh
# Programs in other languages: Rust on the system allocator (exact counts from its sites,
# names demangled) and Python with threads (same output, every thread in the profile). For an
# arm64 library under emulation (make check-arm64) the Go program is cross-built (GOARCH=arm64,
# the cross compiler for its C); this machine's rustc, python3 and sh are its own processor's,
# into which that library cannot be loaded.
. "$srcdir/tests/tap.sh"
native=""
[ "$mf_arch" = "$(uname -m)" ] && native=1
goenv=""
[ "$mf_arch" = aarch64 ] && [ -z "$native" ] && goenv="GOARCH=arm64 CC=aarch64-linux-gnu-gcc"
why=$(rust_why)
[ -z "$why" ] && [ -z "$native" ] && why="rustc builds $(uname -m)'s programs, the library is $mf_arch's (emulated run)"
if [ -z "$why" ]; then
	rustc -C opt-level=1 -g -o "$mf_work/prog_rust" "$srcdir/tests/progs/prog_rust.rs" 2> "$mf_work/rustc.err"
	ok $? "rustc builds the Rust program"
	plain=$("$mf_work/prog_rust")
	got=$(profile "$mf_work/prog_rust"); rc=$?
	is "$rc:$got" "0:$plain" "Rust: same output and status"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2>/dev/null
	is "$(calls "$mf_work/c.txt" 'prog_rust::site_rust_box(;[^;]*)*;malloc$')" 3000 "Rust: Box::new from site_rust_box, 3 x 1000 calls, name demangled"
	is "$(calls "$mf_work/c.txt" 'prog_rust::site_rust_vec(;[^;]*)*;malloc$')" 1500 "Rust: Vec::with_capacity from site_rust_vec, 3 x 500 calls"
	is "$(grep -c '_ZN\|_R[A-Z]' "$mf_work/c.txt")" 0 "Rust: no mangled names left"
else
	skip "Rust: $why"
fi
py=$(ls /usr/bin/python3 2>/dev/null || command -v python3)
if [ -z "$native" ]; then
	skip "Python: python3 here is $(uname -m)'s, the library $mf_arch's (emulated run)"
elif [ -n "$py" ]; then
	rm -rf "$mf_work"/malloc_freq.*
	plain=$("$py" "$srcdir/tests/progs/prog_python.py")
	got=$(profile "$py" "$srcdir/tests/progs/prog_python.py"); rc=$?
	is "$rc:$got" "0:$plain" "Python: same output and status"
	report=$("$MF_PRINT" --threads "$mf_work"/malloc_freq.* 2>/dev/null); ok $? "Python: the profile reads"
	like "$report" "^malloc_freq: [0-9]+ calls, .* ([5-9]|[1-9][0-9]+) threads in" "Python: the main thread and its four workers are in it"
else
	echo "# python3 not installed: Python skipped"
fi
# Go with cgo: its C.malloc calls recorded; and how it ended, though Go's runtime ends the
# process by a system call of its own (exit_group), past exit() and _exit(): a profiled
# parent's wait (the launcher's, a shell's) says "exited N" (it read "ended unrecorded (then its
# pid exited N)"), and with none the summary says why the end is not known (it read "killed
# with no profiled parent to see it, crashed, or exec'd into a program not profiled").
if [ -z "$native" ] && [ -z "$goenv" ]; then
	skip "cgo: no cross build for $mf_arch here (emulated run)"
elif command -v go > /dev/null 2>&1; then
	mkdir "$mf_work/cgo"
	cat > "$mf_work/cgo/main.go" <<'GO'
package main

// #include <stdlib.h>
import "C"
import (
	"os"
	"unsafe"
)

func main() {
	for i := 0; i < 100; i++ {
		C.free(unsafe.Pointer(C.malloc(48)))
	}
	if len(os.Args) > 1 {
		os.Exit(3)
	}
}
GO
	# shellcheck disable=SC2086 # (goenv: the cross build's GOARCH and CC, or nothing)
	(cd "$mf_work/cgo" && GOCACHE="$mf_work/gocache" GOPATH="$mf_work/gopath" GO111MODULE=off \
		CGO_ENABLED=1 env $goenv go build -o prog_cgo main.go) > "$mf_work/go.err" 2>&1
	ok $? "go builds a cgo program"
	cgo=$mf_work/cgo/prog_cgo
	rm -rf "$mf_work"/malloc_freq.*
	profile "$cgo"; rc=$?
	"$MF_PRINT" "$mf_work"/malloc_freq.* > "$mf_work/report" 2> /dev/null
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$rc:$(calls "$mf_work/c.txt" '_Cfunc__Cmalloc;malloc$')" "0:100" "cgo: exit 0, its 100 calls of C.malloc"
	# (a file a thread that allocated: which of Go's threads run its calls is the scheduler's)
	like "$(cat "$mf_work/report")" "[0-9]+ files? not finalized, of process [0-9]+ \(prog_cgo\): ended without saying how: a Go program ends by a system call of its own" \
		"cgo, no profiled parent: the summary says the end is not known, and why"
	if [ -n "$native" ]; then
		rm -rf "$mf_work"/malloc_freq.*
		profile sh -c '"$1"; "$1" x; exit 0' sh "$cgo"
		"$MF_PRINT" --processes "$mf_work" > "$mf_work/procs" 2> /dev/null
		is "$(grep -o '\[prog_cgo\] [0-9]*, [^:]*' "$mf_work/procs" | sed 's/ [0-9]*,/,/' | tr '\n' ';')" \
			"[prog_cgo], exited 0;[prog_cgo], exited 3;" "cgo under a profiled shell: exited 0, and exited 3 (os.Exit)"
	else
		skip "cgo under a profiled shell: sh here is $(uname -m)'s, the library $mf_arch's (emulated run)"
	fi
	launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
	"$launcher" -q -o "$mf_work/launched" "$cgo" x; rc=$?
	is "$rc:$("$MF_PRINT" --processes "$mf_work/launched" 2> /dev/null | grep -o '\[prog_cgo\] [0-9]*, [^:]*' | sed 's/ [0-9]*,/,/')" \
		"3:[prog_cgo], exited 3" "cgo under the launcher: exited 3"
else
	skip "go not installed (apt-get install golang-go): cgo skipped"
fi
[ "$mf_n" -gt 0 ] || skip_all "neither rustc nor python3 installed"
done_testing
