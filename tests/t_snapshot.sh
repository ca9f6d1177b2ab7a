#!/bin/sh
# Snapshots (malloc_freq_snapshot, malloc_freq_reset) and mf_print's --snapshot, --since,
# --between and --list, on phases of known sizes (tests/prog_snapshot.c): each exact per site,
# a thread that ended before a snapshot included, a parent directory read never counting a
# snapshot, a SIGKILL right after a snapshot leaving both readable.
. "$srcdir/tests/tap.sh"
p1=100 p2=200 p3=300
out=$(profile "$MF_TESTS/prog_snapshot" phases $p1 $p2 $p3); rc=$?
is "$rc" 0 "phases: exits 0"
is "$(echo "$out" | tr '\n' ' ')" "one 1 two 2 " "the snapshots are numbered 1 and 2"
dir=$(ls -d "$mf_work"/malloc_freq.*)
# report NAME OPTIONS...: the collapsed stacks of dir with these options, in $mf_work/NAME
report() { f="$mf_work/$1"; shift; "$MF_PRINT" --collapsed "$@" "$dir" > "$f" 2> "$f.err"; }
# expect NAME P1 P2 P3 T1 T2: calls at site_p1, site_p2, site_p3 (all threads), and in t1, t2
expect() {
	got="$(calls "$mf_work/$1" ';site_p1;malloc$') $(calls "$mf_work/$1" ';site_p2;malloc$')"
	got="$got $(calls "$mf_work/$1" ';site_p3;malloc$') $(calls "$mf_work/$1" ';t1;site_p1;malloc$')"
	got="$got $(calls "$mf_work/$1" ';t2;site_p2;malloc$')"
	is "$got" "$2 $3 $4 $5 $6" "$1: site_p1 site_p2 site_p3, t1's, t2's"
}
report live; expect live $((2 * p1)) $((2 * p2)) $p3 $p1 $p2
report snap1 --snapshot 1; expect snap1 $((2 * p1)) 0 0 $p1 0
report snaptwo --snapshot two; expect snaptwo $((2 * p1)) $((2 * p2)) 0 $p1 $p2
report since1 --since 1; expect since1 0 $((2 * p2)) $p3 0 $p2
report between --between one 2; expect between 0 $((2 * p2)) 0 0 $p2
report sincetwo --since two; expect sincetwo 0 0 $p3 0 0
# a snapshot named on the command line reads as --snapshot does, with its process's modules
"$MF_PRINT" --collapsed "$dir/snap.1.one" > "$mf_work/direct" 2> "$mf_work/direct.err"
expect direct $((2 * p1)) 0 0 $p1 0
is "$(cat "$mf_work/direct.err")" "" "snap.1.one named directly: nothing said (modules found)"
is "$(find "$dir/snap.1.one" -name '*.prof' -links +1 | wc -l)" 1 \
	"snapshot 1: the thread that had ended is a hard link to its file, main's a copy"
like "$("$MF_PRINT" --snapshot 1 "$dir" 2> /dev/null)" "^  counts as of snapshot 1$" \
	"the summary says which counts it shows"
"$MF_PRINT" --collapsed "$mf_work" > "$mf_work/parent" 2> /dev/null
expect parent $((2 * p1)) $((2 * p2)) $p3 $p1 $p2
# --list: both, in order, with labels and totals that do not decrease
"$MF_PRINT" --list "$dir" > "$mf_work/list" 2> "$mf_work/list.err"; rc=$?
is "$rc" 0 "--list: exits 0"
is "$(awk 'NR > 1 { print $1, $(NF - 1) }' "$mf_work/list" | tr '\n' ' ')" "1 one, 2 two, " \
	"--list: snapshots 1 and 2, labelled"
is "$(awk 'NR > 1 { print $4 }' "$mf_work/list" | tr '\n' ' ')" \
	"$((2 * p1 + 1)) $((2 * p1 + 2 * p2 + 1)) " "--list: their calls (and a calloc of pthread_create)"
# errors
"$MF_PRINT" --snapshot 9 "$dir" > /dev/null 2> "$mf_work/err"; rc=$?
is "$rc:$(cat "$mf_work/err")" "1:mf_print: $dir: no snapshot 9 here (--list names them)" \
	"--snapshot 9: named as missing, exit 1"
"$MF_PRINT" --between 2 1 "$dir" > /dev/null 2> "$mf_work/err"; rc=$?
is "$rc:$(cat "$mf_work/err")" "1:mf_print: $dir: snapshot 2 is not earlier than snapshot 1" \
	"--between 2 1: refused, exit 1"
"$MF_PRINT" --snapshot 1 --since 2 "$dir" > /dev/null 2>&1; is "$?" 2 "--snapshot with --since: usage error"
"$MF_PRINT" --between 1 > /dev/null 2>&1; is "$?" 2 "--between with one snapshot: usage error"

# malloc_freq_reset: counting starts over in mf_print and in malloc_freq_stats
rm -rf "$mf_work"/malloc_freq.*
out=$(profile "$MF_TESTS/prog_snapshot" reset 400 500); rc=$?
is "$rc" 0 "reset: exits 0"
like "$out" "^stats 500$" "malloc_freq_stats counts from the reset: 500"
dir=$(ls -d "$mf_work"/malloc_freq.*)
report reset; is "$(calls "$mf_work/reset" ';site_a;malloc$') $(calls "$mf_work/reset" ';site_b;malloc$')" \
	"0 500" "by default mf_print counts from the reset"
report whole --since 0
is "$(calls "$mf_work/whole" ';site_a;malloc$') $(calls "$mf_work/whole" ';site_b;malloc$')" \
	"400 500" "--since 0: the whole run"
like "$("$MF_PRINT" "$dir" 2> /dev/null)" "^  counts since the last malloc_freq_reset of 1 process" \
	"the summary says counts start at the reset"

# SIGKILL right after a snapshot: the snapshot and the live profile both readable
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_snapshot" killed 700 > /dev/null; is "$?" 137 "killed: SIGKILL (137)"
dir=$(ls -d "$mf_work"/malloc_freq.*)
report killsnap --snapshot before-kill
is "$(calls "$mf_work/killsnap" ';site_a;malloc$') $(calls "$mf_work/killsnap" ';site_b;malloc$')" \
	"700 0" "the snapshot taken before the kill reads whole"
report killlive
is "$(calls "$mf_work/killlive" ';site_a;malloc$') $(calls "$mf_work/killlive" ';site_b;malloc$')" \
	"700 700" "and so does the live profile"
ls -a "$dir" | grep -q '\.tmp$'; is "$?" 1 "no temporary snapshot left"
done_testing
