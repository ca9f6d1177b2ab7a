#!/bin/sh
# The stub library: one binary linked with -lmalloc_freq_api (shared, and again static) runs
# unchanged without the profiler (the API does nothing, malloc_freq_stats says ENOSYS), and
# with the profiler preloaded its functions take over: started off, only the calls between
# malloc_freq_enable and malloc_freq_disable are recorded (with lifetimes too, and the frees
# made while off are not counted as frees of unknown blocks). The pkg-config file names it.
. "$srcdir/tests/tap.sh"
a=300 b=500
for prog in prog_api prog_api_static; do
	p="$MF_TESTS/$prog"
	if [ $prog = prog_api ]; then
		readelf -d "$p" 2> /dev/null | grep -q 'NEEDED.*libmalloc_freq_api\.so'
		ok $? "$prog needs libmalloc_freq_api.so"
	fi
	plain=$(cd "$mf_work" && "$p" $a $b); rc=$?
	is "$rc" 0 "$prog without the profiler: exits 0"
	like "$plain" "^dir none$" "$prog without the profiler: malloc_freq_dir() is NULL"
	like "$plain" "^stats -1 ENOSYS 0 0$" "$prog without the profiler: malloc_freq_stats says ENOSYS"
	ls -d "$mf_work"/malloc_freq.* > /dev/null 2>&1; is "$?" 2 "$prog without the profiler: no profile"
	prof=$(MALLOC_FREQ_START=off profile "$p" $a $b); rc=$?
	is "$rc" 0 "$prog preloaded: exits 0"
	is "$(echo "$prof" | grep '^sum')" "$(echo "$plain" | grep '^sum')" "$prog: the same work either way"
	dir=$(ls -d "$mf_work"/malloc_freq.*)
	like "$prof" "^dir $dir\$" "$prog preloaded: malloc_freq_dir() names the profile, made at start"
	like "$prof" "^stats 0 0 $b [0-9]+\$" "$prog preloaded: malloc_freq_stats counts the $b calls enabled"
	"$MF_PRINT" --collapsed "$dir" > "$mf_work/c" 2> /dev/null
	is "$(calls "$mf_work/c" ';site_inside;malloc$')" $b "$prog preloaded: $b calls at site_inside"
	is "$(calls "$mf_work/c" ';site_outside;malloc$')" 0 "$prog preloaded: none at site_outside (off)"
	rm -rf "$dir"
done
# The static stub looks the profiler up at start: a call makes no allocation through the
# program's malloc, not even the first, where it is not loaded (a failed dlsym allocates its
# error message; from a signal handler that interrupted malloc, that corrupted the heap)
is "$("$MF_TESTS/prog_api_count")" "mallocs 0" "the static stub without the profiler: its calls allocate nothing"
# With lifetimes, started off: the blocks of the calls made while off are not seen allocated,
# and their 2 x $a frees (while off too) are not counted as frees of unknown blocks.
MALLOC_FREQ_START=off MALLOC_FREQ_LIFETIMES=1 profile "$MF_TESTS/prog_api" $a $b > /dev/null
summary=$("$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null)
unknown=$(printf '%s\n' "$summary" | sed -n 's/.*; \([0-9]*\) frees\{0,1\} of \(a \)\{0,1\}blocks\{0,1\} never seen allocated$/\1/p')
leaked=$(printf '%s\n' "$summary" | sed -n 's/^  lifetimes: \([0-9]*\) blocks\{0,1\} .*/\1/p')
[ -n "$unknown" ] && [ "$unknown" -lt 10 ] && [ "$leaked" = 0 ]
ok $? "MALLOC_FREQ_LIFETIMES=1, started off: $leaked leaked, $unknown frees of unknown blocks (under 10)"
rm -rf "$mf_work"/malloc_freq.*
if command -v pkg-config > /dev/null; then
	pc=$(PKG_CONFIG_PATH="$MF_TESTS/../.." pkg-config --cflags --libs malloc_freq_api); rc=$?
	is "$rc" 0 "pkg-config reads malloc_freq_api.pc"
	like "$pc" "-lmalloc_freq_api" "and names -lmalloc_freq_api"
else
	pass "# SKIP no pkg-config"
fi
done_testing
