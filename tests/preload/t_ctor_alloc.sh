#!/bin/sh
# The profiler starts inside a call made before its constructor ran (a library's constructor
# that allocates, as libselinux's under ls). The loader allocates while the profiler starts
# (glibc before 2.34: the dlerror state of the first dlsym); that allocation is the profiler's,
# and the call it starts in is recorded like the rest: no crash, every call counted.
. "$srcdir/tests/tap.sh"
plugin="$MF_TESTS/.libs/plugin.so"
ctor="$MF_TESTS/.libs/ctoralloc.so"
[ -f "$plugin" ] && [ -f "$ctor" ] || bail "no $plugin or $ctor"

for mode in cached check libunwind; do
	rm -rf "$mf_work"/malloc_freq.*
	MF_AFTER="$ctor" MALLOC_FREQ_UNWIND=$mode profile_within 60 "$MF_TESTS/prog_dlopen" "$plugin" 10 \
		> /dev/null 2> "$mf_work/err"
	is "$?" 0 "$mode: prog_dlopen with a constructor that allocates before the profiler's exits 0"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';ctor_site;malloc$'):$(calls "$mf_work/c.txt" ';main;.*plugin_run;plugin_site;malloc$')" \
		"5:10" "$mode: the constructor's 5 calls and the program's 10, each counted"
	[ "$mode" = check ] &&
		is "$(grep -c 'unwind check: \(frame\|hot\)' "$mf_work/err")" 0 "check: every stack equals libunwind's"
done
done_testing
