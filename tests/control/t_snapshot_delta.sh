#!/bin/sh
# Snapshots a long run can afford: each one after the first of its chain holds only the thread
# files that changed (tests/progs/prog_snapshot churn: K short threads a round, N rounds, one
# snapshot a round by signal), so the process directory's entries and bytes grow with the
# threads and the snapshots, not with their product; and every snapshot reads exactly as a
# full one: --snapshot, --between, --since, a snapshot directory named, across a reset, with
# lifetimes, after a SIGKILL. With lifetimes, a new peak of the process's live bytes before each
# snapshot takes no ended thread's file again, and one that can change no more is named, not
# copied. A profile of format 9 (full snapshots, hard links) still reads.
. "$srcdir/tests/tap.sh"
K=20 N=12 C=50 R=6
out=$(MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 profile_within 120 "$MF_TESTS/prog_snapshot" churn $K $N $C $R 0); rc=$?
is "$rc" 0 "churn: exits 0"
is "$(echo "$out" | awk '{ print $2 }' | tr '\n' ' ')" "1 2 3 4 5 6 7 8 9 10 11 12 13 " \
	"churn: 12 snapshots by signal and the reset's (6) after round 6"
dir=$(ls -d "$mf_work"/malloc_freq.*)
S=13 threads=$((K * N + 1))
entries=$(find "$dir" | wc -l)
[ "$entries" -le $((threads + 4 * S + 8)) ]
ok $? "$entries entries under the process directory for $threads thread files and $S snapshots (at most $((threads + 4 * S + 8)))"
# snap ROUND: the number of the snapshot taken after round ROUND
snap() { echo "$out" | awk -v i="$1" '$1 == "signal" && ++n == i { print $2 }'; }
# expect NAME A B WHAT OPTIONS...: calls at site_a and site_b in mf_print --collapsed OPTIONS
expect() {
	name=$1 a=$2 b=$3 what=$4; shift 4
	"$MF_PRINT" --collapsed "$@" > "$mf_work/$name" 2> "$mf_work/$name.err"; rc=$?
	is "$rc $(calls "$mf_work/$name" ';site_a;malloc$') $(calls "$mf_work/$name" ';site_b;malloc$') $(cat "$mf_work/$name.err")" \
		"0 $a $b " "$what: site_a $a, site_b $b, nothing said"
}
bad=""
for i in $(seq 1 $N); do
	s=$(snap $i)
	"$MF_PRINT" --collapsed --snapshot "$s" "$dir" > "$mf_work/s" 2> "$mf_work/s.err" || bad="$bad $s(exit)"
	got="$(calls "$mf_work/s" ';site_a;malloc$') $(calls "$mf_work/s" ';site_b;malloc$')"
	[ "$got" = "$((i * K * C)) $(((i + 1) / 2 * C))" ] && [ ! -s "$mf_work/s.err" ] || bad="$bad $s($got)"
done
is "$bad" "" "--snapshot N after each round i: site_a i*K*C, site_b C per odd round, nothing said"
expect between $((3 * K * C)) $((2 * C)) "--between (rounds 2 and 5)" --between "$(snap 2)" "$(snap 5)" "$dir"
expect since $(((N - 8) * K * C)) $((2 * C)) "--since (round 8)" --since "$(snap 8)" "$dir"
expect live $(((N - R) * K * C)) $((3 * C)) "the live profile, less the reset" "$dir"
expect afterreset $((3 * K * C)) $((2 * C)) "--between the reset and round 9" --between 6 "$(snap 9)" "$dir"
expect named $((9 * K * C)) $((5 * C)) "snapshot of round 9 named on the command line" "$dir/snap.$(snap 9).signal"
"$MF_PRINT" --list "$dir" > "$mf_work/list" 2> "$mf_work/list.err"; rc=$?
is "$rc:$(cat "$mf_work/list.err")" "0:" "--list reads every snapshot, says nothing on stderr"
bad=0
for s in $(seq 1 $S); do
	n=$("$MF_PRINT" --snapshot "$s" "$dir" 2> /dev/null | awk 'NR == 1 { print $2 }')
	[ "$n" = "$(awk -v s="$s" '$1 == s { print $4 }' "$mf_work/list")" ] || bad=$((bad + 1))
done
is "$bad" 0 "each snapshot's --snapshot N total is --list's"
# a snapshot it builds on taken away: said, once
mv "$dir/snap.$(snap 3).signal" "$mf_work/gone"
"$MF_PRINT" --collapsed --snapshot "$(snap 5)" "$dir" > /dev/null 2> "$mf_work/err"; rc=$?
like "$rc $(cat "$mf_work/err")" "^1 mf_print: $dir/snap\.$(snap 5)\.signal: builds on snapshot $(snap 3), which is not there: the threads that did not change since it are left out$" \
	"a snapshot it builds on missing: said once, exit 1"
mv "$mf_work/gone" "$dir/snap.$(snap 3).signal"
# ... or there with a record that cannot be read: said the same way, with why; the rest is read
s3=$(snap 3) s5=$(snap 5)
cp "$dir/snap.$s3.signal/snapshot" "$mf_work/record"
head -c 10 "$mf_work/record" > "$dir/snap.$s3.signal/snapshot"
"$MF_PRINT" --collapsed --snapshot "$s5" "$dir" > "$mf_work/s" 2> "$mf_work/err"; rc=$?
like "$rc $(cat "$mf_work/err")" "^1 mf_print: $dir/snap\.$s5\.signal: builds on snapshot $s3, whose record cannot be read \($dir/snap\.$s3\.signal/snapshot: truncated: 10 bytes\): the threads that did not change since it are left out$" \
	"a snapshot it builds on with an unreadable record: said once with why, exit 1"
[ "$(calls "$mf_work/s" ';site_a;malloc$')" -gt 0 ]
ok $? "... and the threads that changed since are still reported"
cp "$mf_work/record" "$dir/snap.$s3.signal/snapshot"
# two snapshots of one number (a copy beside it): which one is meant is not known, so said
cp -r "$dir/snap.$s3.signal" "$dir/snap.$s3.copy"
"$MF_PRINT" --collapsed --snapshot "$s3" "$dir" > /dev/null 2> "$mf_work/err"; rc=$?
like "$rc $(cat "$mf_work/err")" "^1 mf_print: $dir: snap\.$s3\.(signal and snap\.$s3\.copy|copy and snap\.$s3\.signal) both have number $s3: which one is meant is not known; rename or remove one$" \
	"--snapshot N with two snapshots numbered N: refused by name, exit 1"
"$MF_PRINT" --collapsed --snapshot "$s5" "$dir" > /dev/null 2> "$mf_work/err"; rc=$?
like "$rc $(cat "$mf_work/err")" "^1 mf_print: $dir/snap\.$((s3 + 1))\.signal builds on snapshot $s3, and $dir/snap\.$s3\.[a-z]+ and snap\.$s3\.[a-z]+ both have that number" \
	"a chain through a number two snapshots have: refused by name, exit 1"
rm -rf "$dir/snap.$s3.copy"

# a chain is at most 64 long: the 65th of 70 background snapshots is full, so that taking the
# first away leaves the 70th whole
rm -rf "$mf_work"/malloc_freq.*
out=$(MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 profile_within 120 "$MF_TESTS/prog_snapshot" churn 1 70 1 0 0)
dir=$(ls -d "$mf_work"/malloc_freq.*)
mv "$dir/snap.1.signal" "$mf_work/gone"
"$MF_PRINT" --collapsed --snapshot 70 "$dir" > "$mf_work/s70" 2> "$mf_work/s70.err"; rc=$?
is "$rc $(calls "$mf_work/s70" ';site_a;malloc$') $(calls "$mf_work/s70" ';site_b;malloc$') $(cat "$mf_work/s70.err")" \
	"0 70 35 " "70 snapshots: the 70th reads whole without the first (its chain starts at the 65th)"
"$MF_PRINT" --collapsed --snapshot 64 "$dir" > /dev/null 2> "$mf_work/s64.err"; rc=$?
like "$rc $(cat "$mf_work/s64.err")" "^1 .*builds on snapshot 1, which is not there" \
	"... while the 64th builds on the first: said, exit 1"
# a snapshot in the chain of another process (its record's pid, at offset 32, changed)
if command -v python3 > /dev/null 2>&1; then
	python3 -c 'import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(32); pid = struct.unpack("<Q", f.read(8))[0]
f.seek(32); f.write(struct.pack("<Q", pid + 1))' "$dir/snap.69.signal/snapshot"
	"$MF_PRINT" --collapsed --snapshot 70 "$dir" > /dev/null 2> "$mf_work/s70.err"; rc=$?
	like "$rc $(cat "$mf_work/s70.err")" "^1 mf_print: $dir/snap\.69\.signal/snapshot: a snapshot of process [0-9]+, which snap\.70\.signal \(process [0-9]+\) builds on: a chain never crosses processes" \
		"a snapshot of another process in the chain: refused by name, exit 1"
else
	skip "no python3 (it changes a snapshot's record)"
fi

# with lifetimes, ended by SIGKILL: an ended thread's file is copied (frees still change it),
# once, so the snapshots' bytes stay below the live files'
rm -rf "$mf_work"/malloc_freq.*
out=$(MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 profile_within 120 "$MF_TESTS/prog_snapshot" churn $K $N $C 0 1)
is "$(echo "$out" | wc -l)" $N "lifetimes: $N snapshots, then SIGKILL"
dir=$(ls -d "$mf_work"/malloc_freq.*)
live=$(cat "$dir"/*.prof | wc -c)
snaps=$(du -scb "$dir"/snap.* | awk 'END { print $1 }')
[ "$snaps" -le "$live" ]
ok $? "lifetimes: the snapshots take $snaps bytes, the live thread files $live"
bad=""
for i in $(seq 1 $N); do
	"$MF_PRINT" --collapsed --snapshot "$i" "$dir" > "$mf_work/s" 2> "$mf_work/s.err" || bad="$bad $i(exit)"
	got="$(calls "$mf_work/s" ';site_a;malloc$') $(calls "$mf_work/s" ';site_b;malloc$')"
	[ "$got" = "$((i * K * C)) $(((i + 1) / 2 * C))" ] && [ ! -s "$mf_work/s.err" ] || bad="$bad $i($got)"
done
is "$bad" "" "lifetimes, killed: every --snapshot N exact, nothing said"
"$MF_PRINT" --leaks -t 0 --snapshot $N "$dir" > "$mf_work/leaks" 2> "$mf_work/leaks.err"; rc=$?
is "$rc:$(cat "$mf_work/leaks.err")" "0:" "lifetimes, killed: the last snapshot's --leaks reads"

# with lifetimes and a new maximum of the process's live bytes before each snapshot (main keeps
# 128 KiB a round): an ended thread's file whose counts did not change is not taken again, and
# one that can change no more (none of its blocks live, none at the peak) is named, not
# copied: each snapshot copies main's file and names its round's K threads; the peak still
# reads right
rm -rf "$mf_work"/malloc_freq.*
out=$(MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 profile_within 120 "$MF_TESTS/prog_snapshot" churn $K $N $C 0 0 131072); rc=$?
is "$rc $(echo "$out" | wc -l)" "0 $N" "lifetimes, a new peak each round: exits 0, $N snapshots"
dir=$(ls -d "$mf_work"/malloc_freq.*)
is "$(ls "$dir"/snap.* | grep -c '\.prof$') $(cat "$dir"/snap.*/ended | sort -u | wc -l) $(cat "$dir"/snap.*/ended | wc -l)" \
	"$N $((K * N)) $((K * N))" \
	"lifetimes, a new peak each round: the snapshots copy main's file $N times and name each of the $((K * N)) ended threads once"
"$MF_PRINT" --collapsed --weight peak-blocks "$dir" > "$mf_work/peak" 2> "$mf_work/peak.err"; rc=$?
is "$rc $(calls "$mf_work/peak" ';site_kept;malloc$') $(calls "$mf_work/peak" ';site_a;malloc$') $(cat "$mf_work/peak.err")" \
	"0 $N 0 " "lifetimes, a new peak each round: at the peak $N blocks of site_kept live, none of site_a"
bad=""
for i in $(seq 1 $N); do
	"$MF_PRINT" --collapsed --snapshot "$i" "$dir" > "$mf_work/s" 2> "$mf_work/s.err" || bad="$bad $i(exit)"
	got="$(calls "$mf_work/s" ';site_a;malloc$') $(calls "$mf_work/s" ';site_b;malloc$') $(calls "$mf_work/s" ';site_kept;malloc$')"
	[ "$got" = "$((i * K * C)) $(((i + 1) / 2 * C)) $i" ] && [ ! -s "$mf_work/s.err" ] || bad="$bad $i($got)"
done
is "$bad" "" "lifetimes, a new peak each round: every --snapshot N exact, nothing said"

# format 9, as its writer left a profile: full snapshots, ended threads' files hard links
if command -v python3 > /dev/null 2>&1; then
	rm -rf "$mf_work"/malloc_freq.*
	profile "$MF_TESTS/prog_snapshot" phases 100 200 300 > /dev/null
	dir=$(ls -d "$mf_work"/malloc_freq.*)
	for o in "--snapshot 1" "--since 1" "--between 1 2" "--list"; do
		"$MF_PRINT" --collapsed $o "$dir" > "$mf_work/new.$(echo $o | tr -d ' -')" 2>&1
	done
	# (version 12: ended threads packed by the snapshots; version 9 left their files)
	python3 "$srcdir/tests/progs/unpack_pack.py" "$dir"
	python3 - "$dir" << 'PY'
import glob, os, struct, sys
d = sys.argv[1]
for s in glob.glob(d + "/snap.*"):
    if os.path.exists(s + "/ended"):
        for name in open(s + "/ended").read().split():
            os.link(d + "/" + name, s + "/" + name)
        os.remove(s + "/ended")
for f in glob.glob(d + "/*") + glob.glob(d + "/snap.*/*"):
    if os.path.isdir(f) or os.stat(f).st_nlink > 1 and "/snap." in f:
        continue
    b = bytearray(open(f, "rb").read())
    struct.pack_into("<I", b, 8, 9)
    if f.endswith(".prof"):  # (a one-page header, its timeline records of 64 bytes)
        b[176:200] = bytes(24)
        struct.pack_into("<I", b, 16, 4096)
        records = b"".join(b[1024 + 208 * i:1024 + 208 * i + 64] for i in range(48))
        b = b[:1024] + records + bytes(4096 - 1024 - len(records)) + b[12288:]
    open(f, "wb").write(bytes(b))
PY
	same=0
	for o in "--snapshot 1" "--since 1" "--between 1 2" "--list"; do
		"$MF_PRINT" --collapsed $o "$dir" 2>&1 | cmp -s - "$mf_work/new.$(echo $o | tr -d ' -')" && same=$((same + 1))
	done
	is "$same $(od -An -tu4 -j8 -N4 "$dir/snap.1.one/snapshot" | tr -d ' ')" "4 9" \
		"format 9 (full snapshots, hard links): --snapshot, --since, --between, --list read as before"
else
	skip "no python3 (it makes the format 9 profile)"
fi
done_testing
