#!/bin/sh
# Programs in other languages: Rust on the system allocator (exact counts from its sites,
# names demangled) and Python with threads (same output, every thread in the profile).
. "$srcdir/tests/tap.sh"
if command -v rustc > /dev/null; then
	rustc -C opt-level=1 -g -o "$mf_work/prog_rust" "$srcdir/tests/prog_rust.rs" 2> "$mf_work/rustc.err"
	ok $? "rustc builds the Rust program"
	plain=$("$mf_work/prog_rust")
	got=$(profile "$mf_work/prog_rust"); rc=$?
	is "$rc:$got" "0:$plain" "Rust: same output and status"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2>/dev/null
	is "$(calls "$mf_work/c.txt" 'prog_rust::site_rust_box(;[^;]*)*;malloc$')" 3000 "Rust: Box::new from site_rust_box, 3 x 1000 calls, name demangled"
	is "$(calls "$mf_work/c.txt" 'prog_rust::site_rust_vec(;[^;]*)*;malloc$')" 1500 "Rust: Vec::with_capacity from site_rust_vec, 3 x 500 calls"
	is "$(grep -c '_ZN\|_R[A-Z]' "$mf_work/c.txt")" 0 "Rust: no mangled names left"
else
	echo "# rustc not installed (apt-get install rustc): Rust skipped"
fi
py=$(ls /usr/bin/python3 2>/dev/null || command -v python3)
if [ -n "$py" ]; then
	rm -rf "$mf_work"/malloc_freq.*
	plain=$("$py" "$srcdir/tests/prog_python.py")
	got=$(profile "$py" "$srcdir/tests/prog_python.py"); rc=$?
	is "$rc:$got" "0:$plain" "Python: same output and status"
	report=$("$MF_PRINT" --threads "$mf_work"/malloc_freq.* 2>/dev/null); ok $? "Python: the profile reads"
	like "$report" "^malloc_freq: [0-9]+ calls, .* ([5-9]|[1-9][0-9]+) threads in" "Python: the main thread and its four workers are in it"
else
	echo "# python3 not installed: Python skipped"
fi
[ "$mf_n" -gt 0 ] || skip_all "neither rustc nor python3 installed"
done_testing
