#!/bin/sh
# Whose the profile is: its files are readable by their owner only (600, directories 700)
# unless MALLOC_FREQ_MODE (the launcher's --mode) says otherwise, under any umask; and a
# directory another user could replace the profiles in (another user's, or one anyone may
# write in without the sticky bit) is refused by the launcher (125) and by the library
# (nothing recorded, one line), each naming it.
. "$srcdir/tests/tap.sh"
launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
[ -x "$launcher" ] || bail "no launcher at $launcher"
prog=$MF_TESTS/prog_tree
unset LD_PRELOAD MALLOC_FREQ_DIR MALLOC_FREQ_MODE
cd "$mf_work" || bail "cd $mf_work"
# modes DIR: every file and directory under DIR (itself included) as "MODE KIND", once each
modes() { find "$1" -printf '%m %y\n' | sort -u | tr '\n' ';'; }

(umask 022 && "$launcher" -q -o own "$prog" forkexit 10 5); rc=$?
is "$rc:$(modes own)" "0:600 f;700 d;" "umask 022: the launcher's directory, the process directories and every file are the owner's only"
mkdir -p lib2 && (umask 022 && MALLOC_FREQ_DIR="$mf_work/lib2" LD_PRELOAD="$MF_LIB" "$prog" alloc 10 0 2> err)
is "$(modes lib2/malloc_freq.*)" "600 f;700 d;" "umask 022, the library alone: the same"
(umask 000 && "$launcher" -q -o any "$MF_TESTS/prog_snapshot" reset 40 50 > /dev/null); rc=$?
ls -d any/malloc_freq.*/snap.* > /dev/null 2>&1 || bail "no snapshot made"
is "$rc:$(modes any)" "0:600 f;700 d;" "umask 000, with a snapshot: the same"
(umask 022 && "$launcher" -q --mode 640 -o group "$prog" alloc 10 0); rc=$?
is "$rc:$(modes group)" "0:640 f;750 d;" "--mode 640: files 640, directories 750"
(umask 022 && MALLOC_FREQ_MODE=644 "$launcher" -q -o all "$prog" alloc 10 0); rc=$?
is "$rc:$(modes all)" "0:644 f;755 d;" "MALLOC_FREQ_MODE=644 (the launcher takes it too): files 644, directories 755"
(umask 027 && "$launcher" -q --mode 644 -o masked "$prog" alloc 10 0)
is "$(modes masked)" "640 f;750 d;" "--mode 644 under umask 027: the umask still applies"
for bad in 666 600x 7 0700 1644 ""; do
	"$launcher" --mode "$bad" true > /dev/null 2> err; rc=$?
	like "$rc $(head -1 err)" "^2 malloc_freq: --mode '$bad': give 600, 640 or 644" "--mode '$bad': a usage error"
done
mkdir badmode
MALLOC_FREQ_MODE=0666 MALLOC_FREQ_DIR="$mf_work/badmode" LD_PRELOAD="$MF_LIB" "$prog" alloc 10 0 2> err; rc=$?
is "$rc:$(cat err)" "0:malloc_freq: MALLOC_FREQ_MODE=\"0666\" is not a mode that lets the owner read and write and others at most read (600, 640, 644); using 600" \
	"MALLOC_FREQ_MODE=0666: said once, 600 used"
is "$(modes badmode/malloc_freq.*)" "600 f;700 d;" "... and the files are 600"

# directories others could replace the profiles in; plain, the program's status is 3
# refused WHAT DIR: the launcher (-o DIR) exits 125 naming DIR and WHY, and the library
# (MALLOC_FREQ_DIR=DIR) records nothing, runs the program as plain and names DIR once
refused() {
	what=$1 dir=$2 why=$3
	"$launcher" -o "$dir" "$prog" alloc 10 3 > out 2> err; rc=$?
	is "$rc:$(cat err)" "125:malloc_freq: $dir: $why; give -o a directory of your own" \
		"$what: the launcher refuses -o $dir (125), and says why"
	MALLOC_FREQ_DIR="$mf_work/$dir" LD_PRELOAD="$MF_LIB" "$prog" alloc 10 3 > out 2> err; rc=$?
	is "$rc:$(cat err)" "3:malloc_freq: cannot create a profile directory in $mf_work/$dir: $why; not recording" \
		"$what: the library runs the program as plain, records nothing, and says why once"
	is "$(ls -A "$dir")" "" "$what: nothing made in $dir"
}
# taken WHAT DIR: the launcher and the library both make their profiles in DIR
taken() {
	"$launcher" -q -o "$2" "$prog" alloc 10 3; rc=$?
	MALLOC_FREQ_DIR="$mf_work/$2" LD_PRELOAD="$MF_LIB" "$prog" alloc 10 3 2> err; rc2=$?
	is "$rc:$rc2:$(cat err):$(ls "$2" | wc -l)" "3:3::2" "$1: taken by the launcher and the library"
}
mkdir open && chmod 0777 open
refused "a directory anyone may write in, not sticky" open \
	"any user may write in it (it is not sticky), and so remove or replace the profiles"
mkdir sticky && chmod 1777 sticky
taken "a directory anyone may write in, sticky (as /tmp)" sticky
mkdir mygroup && chgrp "$(id -g)" mygroup && chmod 0770 mygroup
taken "a directory its group may write in, the group being this user's own" mygroup
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
	nobody=$(id -u nobody)
	mkdir theirs && chown nobody theirs && chmod 0777 theirs
	refused "another user's empty directory, mode 0777" theirs \
		"it belongs to another user (uid $nobody), who could remove or replace the profiles"
	mkdir theirs2 && chown nobody theirs2 && chmod 1777 theirs2
	refused "another user's sticky directory" theirs2 \
		"it belongs to another user (uid $nobody), who could remove or replace the profiles"
	# without -o: the directory malloc_freq.<pid> would be made in
	(cd theirs && "$launcher" "$prog" alloc 10 3 > ../out 2> ../err); rc=$?
	is "$rc:$(cat err)" "125:malloc_freq: $mf_work/theirs: it belongs to another user (uid $nobody), who could remove or replace the profiles; run it in a directory of your own, or give -o one" \
		"no -o, in another user's directory: refused (125), named"
	if gid=$(getent group nogroup | cut -d: -f3) && [ -n "$gid" ] && [ "$gid" != "$(id -g)" ]; then
		mkdir theirgroup && chgrp nogroup theirgroup && chmod 0770 theirgroup
		refused "a directory another group may write in, not sticky" theirgroup \
			"the users of its group (gid $gid) may write in it (it is not sticky), and so remove or replace the profiles"
	else
		skip "no group nogroup apart from this user's"
	fi
	mkdir rootdir && chmod 0755 rootdir
	if command -v setpriv > /dev/null; then
		# (a process of another user, in root's directory: root's may hold its profiles, as
		# /tmp does, when it lets it write there)
		chmod 1777 rootdir && chmod 755 "$mf_work"
		setpriv --reuid=nobody --regid=nogroup --clear-groups env MALLOC_FREQ_DIR="$mf_work/rootdir" \
			LD_PRELOAD="$MF_LIB" "$prog" alloc 10 3 2> err; rc=$?
		is "$rc:$(cat err):$(stat -c %U rootdir/malloc_freq.* 2> /dev/null)" "3::nobody" \
			"uid nobody in root's sticky directory: its profile made there, its own"
	else
		skip "no setpriv to run as another user"
	fi
else
	skip "not root: another user's directories cannot be made here"
fi
done_testing
