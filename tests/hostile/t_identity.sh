#!/bin/sh
# A process that changes its identity or its root after it started recording (as root): it
# drops to uid/gid 65534, or chroots into an empty directory, then starts threads that
# allocate while the main thread's trie must grow. Its threads are still recorded, its main
# thread's growth does not fail, and mf_print accounts for every call without blaming the disk.
. "$srcdir/tests/tap.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (setresuid, chroot)"
prog="$MF_TESTS/prog_identity"
chmod 755 "$mf_work" # the profile directory's parents, as a shared place would have them
want=$(within 20 "$prog" drop); prc=$?
[ $prc = 0 ] || skip_all "cannot change identity here (status $prc)"
got=$(profile_within 20 "$prog" drop 2> "$mf_work/err"); rc=$?
is "$rc:$got" "0:$want" "setresuid(65534) after the first calls: runs as without the profiler"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
is "$(calls "$mf_work/c.txt" ';site_before;malloc$')" 1000 "... the 1000 calls made as root"
is "$(calls "$mf_work/c.txt" ';worker;site_thread;malloc$')" 10000 "... the 10000 calls of threads started as uid 65534"
is "$(calls "$mf_work/c.txt" ';site_grow;malloc$')" 1500 "... the main thread's 1500 calls on new stacks (its file grew)"
n=$(accounted "$mf_work"/malloc_freq.*)
[ "$n" -ge 12500 ]; ok $? "... mf_print accounts for all of the 12500 calls made ($n)"
if "$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null | grep -q 'disk full'; then
	fail "... and does not blame a full disk"
else
	pass "... and does not blame a full disk"
fi

# without the right to give files away (CAP_CHOWN), the drop says why its files stay root's
rm -rf "$mf_work"/malloc_freq.*
if setpriv --inh-caps=-chown --bounding-set=-chown true 2> /dev/null; then
	got=$(within 20 setpriv --inh-caps=-chown --bounding-set=-chown \
		env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$prog" drop 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "0:$want" "setresuid(65534) without CAP_CHOWN: runs as without the profiler"
	like "$(cat "$mf_work/err")" "cannot give the profile in .* to user 65534 \(Operation not permitted\)" \
		"... and says that its files could not be given to uid 65534"
else
	skip "setresuid(65534) without CAP_CHOWN: setpriv cannot drop it here"
	skip "... and says that its files could not be given to uid 65534: setpriv cannot drop CAP_CHOWN here"
fi

rm -rf "$mf_work"/malloc_freq.*
mkdir "$mf_work/jail"
want=$(within 20 "$prog" chroot "$mf_work/jail"); prc=$?
got=$(profile_within 20 "$prog" chroot "$mf_work/jail" 2> "$mf_work/err"); rc=$?
is "$rc:$got" "$prc:$want" "chroot into an empty directory after the first calls: runs as without the profiler"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
is "$(calls "$mf_work/c.txt" ';site_before;malloc$')" 1000 "... the 1000 calls made before"
is "$(calls "$mf_work/c.txt" ';worker;site_thread;malloc$')" 5000 "... the 5000 calls of threads started inside the new root"
# the program then closes every descriptor it does not know of, or puts its own where the
# profiler kept the directories: nothing is written into its tree, and the loss is said
for how in close dup; do
	rm -rf "$mf_work"/malloc_freq.* "$mf_work/jail"
	mkdir "$mf_work/jail"
	want=$(within 20 "$prog" chroot-$how "$mf_work/jail"); prc=$?
	rm -f "$mf_work"/jail/*
	got=$(profile_within 20 "$prog" chroot-$how "$mf_work/jail" 2> "$mf_work/err"); rc=$?
	is "$rc:$got:$(ls "$mf_work/jail" | tr '\n' ' ')" "$prc:$want:" "chroot, then the kept descriptors taken ($how): runs as without the profiler, nothing written into the new root"
	like "$(cat "$mf_work/err")" "closed or replaced the directory descriptors kept for its chroot" "... and the loss is said"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';site_before;malloc$')" 1000 "... the 1000 calls made before are there"
done
done_testing
