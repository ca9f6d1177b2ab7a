#!/bin/sh
# Snapshots (malloc_freq_snapshot, malloc_freq_reset) and mf_print's --snapshot, --since,
# --between and --list, on phases of known sizes (tests/progs/prog_snapshot.c): each exact per site,
# a thread that ended before a snapshot included, a parent directory read never counting a
# snapshot, a SIGKILL right after a snapshot leaving both readable; the records after each
# leaf (temporaries, sizes, lifetimes) copied with time weights and tags in the same trie.
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
# (pack_len: the snapshot record's 64-bit word at byte 128; the pack's first record, t1's, ends
# after its 96 bytes and the lengths of its header and nodes, at bytes 24 and 32)
u64() { od -An -tu8 -j"$2" -N8 "$1" | tr -d ' '; }
first=$((96 + $(u64 "$dir/ended.pack" 24) + $(u64 "$dir/ended.pack" 32)))
is "$(ls "$dir/snap.1.one" | grep -c '^ended$\|\.prof$') $(u64 "$dir/snap.1.one/snapshot" 128)" "1 $first" \
	"snapshot 1: the thread that had ended is in the pack below its pack_len, main's a copy"
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

# A process tree where one process takes snapshots: the others have no window to show. Left
# out, in one line, and the process that has it is shown (exit 0); none has it: exit 1.
if native "a tree with a shell in it"; then
tree="$mf_work/tree"
mkdir "$tree"
MALLOC_FREQ_DIR="$tree" LD_PRELOAD="$MF_LIB" sh -c \
	"'$MF_TESTS/prog_snapshot' phases $p1 $p2 $p3 > /dev/null; '$MF_TESTS/prog_tree' alloc 50 0"
is "$(ls -d "$tree"/malloc_freq.* | wc -l)" 3 "tree: sh, prog_snapshot and prog_tree each have a directory"
"$MF_PRINT" --collapsed --since 1 "$tree" > "$mf_work/tree1" 2> "$mf_work/tree1.err"; rc=$?
is "$rc" 0 "tree --since 1: exits 0 (one process has snapshot 1)"
expect tree1 0 $((2 * p2)) $p3 0 $p2
is "$(calls "$mf_work/tree1" ';site_tree;malloc$')" 0 "tree --since 1: prog_tree, with no snapshot, left out"
like "$(cat "$mf_work/tree1.err")" \
	"^mf_print: 2 of 3 processes have no snapshot 1 and are left out \\($tree/malloc_freq\.[0-9]*, \.\.\.; --list names each one's\\)$" \
	"tree --since 1: one line says which are left out"
like "$("$MF_PRINT" --between 1 2 "$tree" 2> /dev/null)" "^malloc_freq: .* from 1 directory$" \
	"tree --between 1 2: the summary counts the one directory read"
"$MF_PRINT" --snapshot 9 "$tree" > /dev/null 2> "$mf_work/err"; rc=$?
is "$rc:$(cat "$mf_work/err")" "1:mf_print: none of the 3 processes has snapshot 9 (--list names them)" \
	"tree --snapshot 9: none has it, exit 1"
fi

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
# A snapshot copies a thread's file with the records after its leaves (format 4): for a
# program idle after it, the snapshot gives the temporaries, size histograms (one stack's of
# ten buckets, past what a leaf holds itself) and leaks the live file gives, exactly; with
# time weights and a tag scope in the same trie, and with lifetimes too.
N=1000
for env in "MALLOC_FREQ_WEIGHT=time" "MALLOC_FREQ_WEIGHT=time MALLOC_FREQ_LIFETIMES=1"; do
	rm -rf "$mf_work"/malloc_freq.*
	out=$(env $env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_snapshot" mixed $N)
	is "$?:$out" "0:idle 1" "mixed $N, $env: exits 0 after snapshot 1"
	dir=$(ls -d "$mf_work"/malloc_freq.*)
	for w in calls temporary bytes; do
		report "live-$w" --weight $w; report "snap-$w" --weight $w --snapshot idle
		cmp -s "$mf_work/live-$w" "$mf_work/snap-$w"
		ok $? "$env: --weight $w of the snapshot is the live file's"
	done
	is "$(calls "$mf_work/snap-calls" '^\[tag\] work;.*;site_a;malloc$') $(calls "$mf_work/snap-temporary" '^\[tag\] work;.*;site_a;malloc$') $(calls "$mf_work/snap-calls" '^\[tag\] work;.*;site_kept;malloc$') $(calls "$mf_work/snap-temporary" ';site_kept;malloc$')" \
		"$N $N $N 0" "$env: the snapshot: in tag work, site_a $N calls all temporaries, site_kept $N calls none"
	"$MF_PRINT" --histogram --snapshot idle "$dir" > "$mf_work/snap-hist" 2> "$mf_work/err"; rc=$?
	"$MF_PRINT" --histogram "$dir" > "$mf_work/live-hist" 2>> "$mf_work/err"
	is "$rc:$(cat "$mf_work/err")" "0:" "$env: --histogram of the snapshot and the live file: nothing said"
	is "$(awk '/site_kept/ { on = 1; next } on && /^ +\[/ { n++ } on && !/^ +\[/ { on = 0 } END { print n + 0 }' "$mf_work/snap-hist")" 10 \
		"$env: the snapshot's histogram of site_kept has its ten buckets"
	# (the buckets: the at-peak column differs, as a process that ends at its peak has its end
	# as its peak, written at exit)
	is "$(grep '^ *\[' "$mf_work/snap-hist")" "$(grep '^ *\[' "$mf_work/live-hist")" \
		"$env: and its buckets, sizes and lifetimes, are the live file's"
	like "$("$MF_PRINT" --sort time --snapshot idle "$dir" 2> /dev/null)" "cpu ms    temp" \
		"$env: the snapshot has time and temporaries"
	like "$("$MF_PRINT" --tags --snapshot idle "$dir" 2> /dev/null)" "^ +$((2 * N)) .* work$" \
		"$env: and the tag's $((2 * N)) calls"
done
"$MF_PRINT" --leaks --snapshot idle "$dir" > "$mf_work/snap-leaks" 2> /dev/null
"$MF_PRINT" --leaks "$dir" > "$mf_work/live-leaks" 2> /dev/null
like "$(cat "$mf_work/snap-leaks")" "site_kept" "lifetimes: the snapshot's leaks name site_kept"
is "$(grep -c site_kept "$mf_work/snap-leaks")" "$(grep -c site_kept "$mf_work/live-leaks")" \
	"lifetimes: as the live file's"

# With lifetimes an ended thread's file still changes (frees of its blocks count in it): a
# snapshot copies it, where without lifetimes it links it (prog_snapshot ended: a thread
# keeps 1000 blocks and ends, snapshot "ended", main frees them, snapshot "freed").
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_LIFETIMES=1 profile "$MF_TESTS/prog_snapshot" ended 1000 > /dev/null; rc=$?
dir=$(ls -d "$mf_work"/malloc_freq.*)
for s in ended freed; do
	"$MF_PRINT" --collapsed --weight leaked-blocks --snapshot $s "$dir" > "$mf_work/leaked-$s" 2> /dev/null
done
is "$rc $(calls "$mf_work/leaked-ended" ';site_kept;malloc$') $(calls "$mf_work/leaked-freed" ';site_kept;malloc$')" \
	"0 1000 0" "lifetimes: an ended thread's 1000 blocks live in the snapshot before main frees them, none after"

# Snapshots while threads' files grow (prog_snapshot growing): a snapshot holds the descriptor
# task's lock while it takes each thread's grow lock, and a growing thread must not hold its
# grow lock while it waits for that task (the process hung within 80 snapshots). Every
# snapshot returns, and the short threads' calls are all in the profile.
rm -rf "$mf_work"/malloc_freq.*
out=$(profile_within 120 "$MF_TESTS/prog_snapshot" growing 200); rc=$?
is "$rc $(echo "$out" | sed -n 1p)" "0 snapshots 200" "growing files: 200 snapshots taken, and the program exits 0"
grown=$(echo "$out" | sed -n 's/^grown //p')
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --collapsed "$dir" > "$mf_work/grown"
is "$(calls "$mf_work/grown" ';site_grown;malloc$')" "${grown:-none}" "growing files: the short threads' $grown calls"

# A snapshot that holds no thread's file (an interval's first, taken before any call made a
# file): --snapshot says there is nothing to report, and why, where it exited 1 saying nothing.
# (Made so by removing its copies, and its list of ended threads' files, which a short
# thread that ended before it has there.)
snap1=$(ls -d "$dir"/snap.1.*)
rm -f "$snap1"/*.prof "$snap1"/ended
"$MF_PRINT" --snapshot 1 "$dir" > "$mf_work/out" 2> "$mf_work/err"; rc=$?
is "$rc:$(wc -c < "$mf_work/out"):$(cat "$mf_work/err")" \
	"1:0:mf_print: nothing to report as of snapshot 1: no thread had a file then" \
	"a snapshot with no thread's file: nothing to report, said, exit 1"
done_testing
