#!/bin/sh
# A file size limit lowered while the program runs: whatever the profiler writes (the rule
# cache at exit, profiles, the module map, its messages on a stderr that is a regular file)
# stays within it, so the kernel never answers with SIGXFSZ, and nothing is left behind.
. "$srcdir/tests/tap.sh"
# (qemu-user makes up /proc/self/maps in a file of its own, written under the program's limit:
# the kernel's SIGXFSZ for that write reaches the program, which dies of it)
[ "$mf_arch" = "$(uname -m)" ] ||
	skip_all "qemu-user writes the /proc/self/maps it makes up under the program's RLIMIT_FSIZE"
prog="$MF_TESTS/prog_fsize"
for limit in 100 0; do
	for run in 1 2 3; do
		rm -rf "$mf_work"/malloc_freq.*
		got=$(profile "$prog" exit $limit); rc=$?
		is "$rc:$got" "0:bye" "RLIMIT_FSIZE lowered to $limit bytes before main returns, run $run: exits 0 (no SIGXFSZ)"
	done
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';site_exit;malloc$')" 100 "... its 100 calls are recorded"
	left=$(ls -A "$MALLOC_FREQ_CACHE" 2> /dev/null | grep -v '\.rules$')
	is "$left" "" "... and no temporary file is left in the rule cache"
done
for limit in 0 50; do
	want=$("$prog" thread $limit 2> "$mf_work/err"); prc=$?
	got=$(profile "$prog" thread $limit 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "$prc:$want" "RLIMIT_FSIZE of $limit bytes, then a thread allocates, stderr a regular file: the profiler's messages do not kill (status $prc)"
done
done_testing
