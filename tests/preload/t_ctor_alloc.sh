#!/bin/sh
# The profiler starts inside a call made before its constructor ran (a library's constructor
# that allocates, as libselinux's under ls). The loader allocates while the profiler starts
# (glibc before 2.34: the dlerror state of the first dlsym); that allocation is the profiler's,
# and the call it starts in is recorded like the rest: no crash, every call counted. A
# snapshot taken there, before any allocation, goes into the profile directory.
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

# A function of malloc_freq.h called before the profiler's constructor, and before any
# allocation (a library's constructor): the profiler starts for it, and the snapshot goes into
# the profile directory (taken before the settings were read, it went into /)
snap="$MF_TESTS/.libs/ctorsnap.so"
[ -f "$snap" ] || bail "no $snap"
rm -rf "$mf_work"/malloc_freq.*
roots=$(ls -d /malloc_freq.* 2> /dev/null)
MF_AFTER="$snap" profile_within 60 "$MF_TESTS/prog_sites" 1 > /dev/null 2> "$mf_work/err"
is "$?" 7 "prog_sites with a constructor that takes a snapshot before the profiler's exits 7"
is "$(grep '^ctorsnap' "$mf_work/err")" "ctorsnap: snapshot 1, errno kept" \
	"... the snapshot is taken (number 1), errno kept"
set -- "$mf_work"/malloc_freq.*/snap.1.early
[ -d "$1" ]
ok $? "... into the profile directory"
is "$(ls -d /malloc_freq.* 2> /dev/null)" "$roots" "... and no directory is made in /"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
is "$(calls "$mf_work/c.txt" ';site_malloc;malloc$')" 100 "... and the program's calls are recorded"
# ... and one that turns recording off there: the profiler starts off (its start does not turn
# it back on)
rm -rf "$mf_work"/malloc_freq.*
CTORSNAP_DISABLE=1 MF_AFTER="$snap" profile_within 60 "$MF_TESTS/prog_sites" 1 > /dev/null 2>&1
is "$?" 7 "a constructor that calls malloc_freq_disable before the profiler's: prog_sites exits 7"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
is "$(calls "$mf_work/c.txt" ';site_malloc;malloc$')" 0 "... and none of its calls is recorded"
like "$("$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null)" "[0-9]+ calls were made while recording was off" \
	"... they are counted as made while recording was off"
done_testing
