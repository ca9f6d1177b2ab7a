#!/bin/sh
# Ended threads' files packed by snapshots into the process directory's ended.pack (format 12):
# a snapshot packs the files of the threads that ended before it, and every reading sees the
# packed threads as their files (totals, --thread, snapshots by the API and by signal,
# --between, --since); a SIGKILL'd run keeps them; a thread both packed and in its file counts
# once, so does a record repeated; a pack cut short is read up to the cut, said unless the cut
# record's file is still there; one that ends before a snapshot's pack_len, or is gone, fails
# naming it (exit 1); a damaged record, a bad name, a newer version are named. Each
# step of packing made to fail (short write, close, unlink, and the cut back after them): the
# file stays (a removal that fails with the file gone keeps its record), nothing is written
# behind a bad record, every count stays exact. A thread that
# ended in seccomp strict mode (still listed, its file mapped) is never packed.
. "$srcdir/tests/tap.sh"

# u64 FILE OFFSET: the 64-bit word there
u64() { od -An -tu8 -j"$2" -N8 "$1" | tr -d ' '; }
# record_end PACK OFFSET: where the record at OFFSET ends (its 96 bytes, header and nodes)
record_end() { echo $(($2 + 96 + $(u64 "$1" $(($2 + 24))) + $(u64 "$1" $(($2 + 32))))); }
# records PACK [LEN]: the whole records at its start (those that end by LEN)
records() {
	size=$(stat -c %s "$1" 2> /dev/null || echo 0) at=0 k=0
	[ -n "$2" ] && [ "$2" -lt "$size" ] && size=$2
	while [ $((at + 96)) -le "$size" ] && [ "$(record_end "$1" $at)" -le "$size" ]; do
		at=$(record_end "$1" $at) k=$((k + 1))
	done
	echo $k
}
# totals NAME DIR...: "STATUS THREADS SITE_SHORT-CALLS" of mf_print DIR..., stderr in NAME.err
totals() {
	out=$1; shift
	"$MF_PRINT" --collapsed "$@" > "$mf_work/$out.txt" 2> "$mf_work/$out.err"; rc=$?
	threads=$("$MF_PRINT" "$@" 2> /dev/null | sed -n '1s/.* \([0-9]*\) threads in .*/\1/p')
	echo "$rc $threads $(calls "$mf_work/$out.txt" ';site_short;malloc$')"
}
# put_u64 FILE OFFSET VALUE: the 64-bit word there made VALUE
put_u64() {
	v=$3 s=""
	for i in 1 2 3 4 5 6 7 8; do s="$s\\$(printf %03o $((v & 255)))" v=$((v >> 8)); done
	printf "$s" | dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null
}
copy() { rm -rf "$mf_work/$1"; cp -r "$d" "$mf_work/$1"; echo "$mf_work/$1"; }
# forge DIR WHAT...: its pack changed by python3, every record's check made to match after
# (dup: the first record again at the end; name K S: record K named S; version K V)
forge() {
	python3 - "$@" << 'PY'
import struct, sys
d, what = sys.argv[1], sys.argv[2]
data = bytearray(open(d + "/ended.pack", "rb").read())
def records():
    at, out = 0, []
    while at + 96 <= len(data):
        hl, nl = struct.unpack_from("<QQ", data, at + 24)
        out.append((at, 96 + hl + nl))
        at += 96 + hl + nl
    return out
def check(b):
    h = 1
    for i in range(0, len(b), 8):
        h = ((h ^ struct.unpack_from("<Q", b, i)[0]) * 0x9e3779b97f4a7c15) & (2**64 - 1)
        h ^= h >> 31
    return h
recs = records()
if what == "dup":
    at, n = recs[0]
    data += data[at:at + n]
elif what == "name":
    at, n = recs[int(sys.argv[3])]
    data[at + 48:at + 96] = sys.argv[4].encode().ljust(48, b"\0")
elif what == "version":
    at, n = recs[int(sys.argv[3])]
    struct.pack_into("<I", data, at + 8, int(sys.argv[4]))
for at, n in records():
    struct.pack_into("<Q", data, at + 40, 0)
    struct.pack_into("<Q", data, at + 40, check(bytes(data[at:at + n])))
open(d + "/ended.pack", "wb").write(data)
PY
}

# a run killed after its snapshot packed N ended threads, N more ended since (their files)
n=200
env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_pack" ended $n > "$mf_work/out" &
pid=$!
i=0
while ! grep -q ready "$mf_work/out" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
grep -q ready "$mf_work/out"; ok $? "$n short threads ended, a snapshot, $n more ended"
kill -9 $pid
wait $pid
d="$mf_work/malloc_freq.$pid" pack="$mf_work/malloc_freq.$pid/ended.pack"
is "$(ls "$d" | grep -c '\.prof$') $(records "$pack") $(u64 "$d/snap.1/snapshot" 128)" \
	"$((n + 1)) $n $(stat -c %s "$pack")" \
	"killed: the snapshot packed the $n that had ended (its pack_len the pack's length); $((n + 1)) files (main's, the $n after)"
is "$(totals killed "$d") $(cat "$mf_work/killed.err")" "0 $((2 * n + 1)) $((2 * n * 10)) " \
	"killed: $((2 * n + 1)) threads, every ended one's 10 calls, nothing said"
is "$(totals snap1 --snapshot 1 "$d") $(cat "$mf_work/snap1.err")" "0 $((n + 1)) $((n * 10)) " \
	"--snapshot 1: the $n packed threads' $((n * 10)) calls, nothing said"
# (the thread's tid: the 64-bit word at byte 40 of its header, after the record's 96)
tid=$(u64 "$pack" $((96 + 40)))
"$MF_PRINT" --collapsed --thread "$tid" "$d" > "$mf_work/one" 2>&1
is "$(calls "$mf_work/one" ';site_short;malloc$')" 10 "--thread $tid: the first packed thread alone, its 10 calls"

# a thread packed and still in its file (as a kill between the write and the removal leaves it)
c=$(copy dup)
hl=$(u64 "$c/ended.pack" 24) nl=$(u64 "$c/ended.pack" 32)
name=$(dd if="$c/ended.pack" bs=1 skip=48 count=48 2> /dev/null | tr -d '\000')
# unpack_first DIR: the pack's first record written out as its file
unpack_first() {
	dd if="$1/ended.pack" of="$1/$name" bs=1 skip=96 count="$hl" 2> /dev/null
	truncate -s 12288 "$1/$name"
	dd if="$1/ended.pack" of="$1/$name" bs=1 skip=$((96 + hl)) seek=12288 count="$nl" conv=notrunc 2> /dev/null
}
unpack_first "$c"
is "$(ls "$c" | grep -c '\.prof$') $(totals dup "$c") $(cat "$mf_work/dup.err")" \
	"$((n + 2)) 0 $((2 * n + 1)) $((2 * n * 10)) " "$name both packed and a file: counted once"
is "$(totals dupsnap --snapshot 1 "$c") $(cat "$mf_work/dupsnap.err")" "0 $((n + 1)) $((n * 10)) " \
	"... and once in snapshot 1"
echo "$name" > "$c/snap.1/ended"
is "$(totals dupnamed --snapshot 1 "$c") $(cat "$mf_work/dupnamed.err")" "0 $((n + 1)) $((n * 10)) " \
	"... once too where snapshot 1 names the file and holds its record (its removal failed)"
rm -rf "$c/ended.pack" "$c"/snap.*
is "$(totals alone "$c" 2> /dev/null | cut -d' ' -f1,3)" "0 $(((n + 1) * 10))" "... and that file alone reads as the thread's"

# a record repeated (the writer never does it): one thread, said
if command -v python3 > /dev/null 2>&1; then
	c=$(copy repeat)
	forge "$c" dup
	is "$(totals repeat "$c")" "0 $((2 * n + 1)) $((2 * n * 10))" "the first record repeated at the end: counted once"
	like "$(cat "$mf_work/repeat.err")" "^mf_print: warning: $c/ended.pack: the record at offset [0-9]+ holds the thread of the one at offset 0 \($name\) again \(1 such in all\); each thread is read once$" \
		"... and said"
	is "$(totals repeatsnap --snapshot 1 "$c" | cut -d' ' -f1,3)" "0 $((n * 10))" "... and snapshot 1 is as it was"
	c=$(copy badname)
	forge "$c" name 1 "../modules"
	at=$(record_end "$c/ended.pack" 0)
	is "$(totals badname "$c" | cut -d' ' -f1)" 1 "a record named ../modules: exit 1"
	like "$(cat "$mf_work/badname.err")" "^mf_print: warning: $c/ended.pack: at offset $at of [0-9]+ bytes, a record whose name \(\"\.\./modules\"\) is not a thread file's \(<tid>\.prof\); the 1 records before it are read" \
		"... and its name said to be no thread file's"
	c=$(copy newer)
	forge "$c" version 0 13
	is "$(totals newer "$c" | cut -d' ' -f1)" 1 "a record of version 13: exit 1"
	like "$(cat "$mf_work/newer.err")" "^mf_print: warning: $c/ended.pack: at offset 0 of [0-9]+ bytes, a record of format version 13, newer than this mf_print reads \(12 to 12\): read it with the mf_print of the malloc_freq that wrote it" \
		"... said to be newer, as a newer file is"
else
	for i in 1 2 3 4 5 6 7; do skip "no python3 (it forges records with checks that match)"; done
fi

# a pack cut in its last record, whose file is gone: the records before it read, the cut named
c=$(copy cut)
size=$(stat -c %s "$c/ended.pack")
truncate -s $((size - 100)) "$c/ended.pack"
is "$(totals cut "$c")" "1 $((2 * n)) $(((2 * n - 1) * 10))" "cut short: the $((n - 1)) whole records read (exit 1)"
like "$(cat "$mf_work/cut.err")" "^mf_print: warning: $c/ended.pack: at offset [0-9]* of $((size - 100)) bytes, a record cut short; the $((n - 1)) records before it are read" \
	"... and the pack and the offset named"
# ... and one whose file is still there (killed while writing it, before the removal)
c=$(copy cutfile)
last=0
while [ "$(record_end "$c/ended.pack" $last)" -lt "$size" ]; do last=$(record_end "$c/ended.pack" $last); done
lname=$(dd if="$c/ended.pack" bs=1 skip=$((last + 48)) count=48 2> /dev/null | tr -d '\000')
hl=$(u64 "$c/ended.pack" $((last + 24))) nl=$(u64 "$c/ended.pack" $((last + 32)))
dd if="$c/ended.pack" of="$c/$lname" bs=1 skip=$((last + 96)) count="$hl" 2> /dev/null
truncate -s 12288 "$c/$lname"
dd if="$c/ended.pack" of="$c/$lname" bs=1 skip=$((last + 96 + hl)) seek=12288 count="$nl" conv=notrunc 2> /dev/null
truncate -s $((size - 100)) "$c/ended.pack"
put_u64 "$c/snap.1/snapshot" 128 "$last" # (killed while writing it: no snapshot holds it)
is "$(totals cutfile "$c") $(cat "$mf_work/cutfile.err")" "0 $((2 * n + 1)) $((2 * n * 10)) " \
	"cut short in a record whose file $lname is there: nothing lost, nothing said, exit 0"

# a pack that ends before snapshot 1's pack_len (cut at a record, or removed): its threads are
# lost, so every reading that counts them fails (exit 1), naming the pack
c=$(copy short)
half=0
for i in $(seq $((n / 2))); do half=$(record_end "$c/ended.pack" $half); done
truncate -s $half "$c/ended.pack"
msg="mf_print: $c/ended.pack: its records end at byte $half, but snapshot 1 holds $size bytes of them: the threads packed after byte $half are lost (the pack was cut short, damaged or replaced)"
is "$(totals shortsnap --snapshot 1 "$c" | cut -d' ' -f1) $(cat "$mf_work/shortsnap.err")" "1 $msg" \
	"a pack cut to $((n / 2)) of snapshot 1's $n records: --snapshot 1 fails, the pack named"
is "$(totals short "$c" | cut -d' ' -f1,2) $(cat "$mf_work/short.err")" "1 $((n + n / 2 + 1)) $msg" \
	"... the plain read says so and exits 1 (the $((n + n / 2 + 1)) threads it has read)"
rm "$c/ended.pack"
msg="mf_print: $c/ended.pack: not there (or not readable), but snapshot 1 holds $size bytes of it: the threads packed in them are lost"
is "$(totals nonesnap --snapshot 1 "$c" | cut -d' ' -f1) $(cat "$mf_work/nonesnap.err")" "1 $msg" \
	"the pack removed: --snapshot 1 fails, the pack named"
is "$(totals none "$c" | cut -d' ' -f1) $(cat "$mf_work/none.err")" "1 $msg" \
	"... the plain read says so and exits 1"

# a byte changed in the third record's nodes: the two before it read, the damage named
c=$(copy damaged)
at=$(record_end "$c/ended.pack" $(record_end "$c/ended.pack" 0))
end=$(record_end "$c/ended.pack" $at)
printf '\377' | dd of="$c/ended.pack" bs=1 seek=$((end - 20)) conv=notrunc 2> /dev/null
is "$(totals damaged "$c")" "1 $((n + 3)) $(((n + 2) * 10))" "damaged third record: the two before it read (exit 1)"
like "$(cat "$mf_work/damaged.err")" "^mf_print: warning: $c/ended.pack: at offset $at of [0-9]* bytes, a record whose check does not match \(damaged\); the 2 records before it are read" \
	"... and the pack and the offset named"

# read as their files were: the pack written out into the files it holds (and linked into
# the snapshots below whose pack_len they are), every report the same
if command -v python3 > /dev/null 2>&1; then
	c=$(copy unpacked)
	python3 "$srcdir/tests/progs/unpack_pack.py" "$c"
	same=""
	for o in --json --timeline --threads --processes "--snapshot 1 --json"; do
		"$MF_PRINT" $o -t 0 "$d" 2>&1 | sed "s|$d|DIR|g" > "$mf_work/packed.out"
		"$MF_PRINT" $o -t 0 "$c" 2>&1 | sed "s|$c|DIR|g" > "$mf_work/files.out"
		cmp -s "$mf_work/packed.out" "$mf_work/files.out" && same="$same $o"
	done
	is "$(ls "$c" | grep -c '\.prof$')$same" "$((2 * n + 1)) --json --timeline --threads --processes --snapshot 1 --json" \
		"the pack written out into $((2 * n + 1)) files: every report the same"
else
	skip "no python3 (it writes the pack out into files)"
fi

# without snapshots nothing is packed
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_threads" many 50 > /dev/null
d=$(ls -d "$mf_work"/malloc_freq.*)
is "$(ls "$d" | grep -c '\.prof$') $(test -e "$d/ended.pack" && echo pack)" "51 " \
	"no snapshot: no pack, a file per thread as before"

# snapshots while threads end: full ones (malloc_freq_snapshot) and chained ones (by signal)
n=30
# rounds NAME HOW [VAR=VALUE...]: prog_pack rounds $n HOW with failpack.so's VARs; every
# snapshot and the end exact, nothing said by mf_print; prints "FILES RECORDS SNAP1" after, SNAP1
# the records below snapshot 1's pack_len
rounds() {
	name=$1 how=$2; shift 2
	rm -rf "$mf_work"/malloc_freq.*
	within 60 env "$@" MALLOC_FREQ_DIR="$mf_work" MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 \
		LD_PRELOAD="$MF_TESTS/.libs/failpack.so:$MF_LIB" \
		"$MF_TESTS/prog_pack" rounds $n $how > /dev/null 2> "$mf_work/$name.run"
	rc=$? d=$(ls -d "$mf_work"/malloc_freq.*) bad=""
	[ $rc = 0 ] || bad=" exit $rc"
	for r in 1 2 3; do
		"$MF_PRINT" --collapsed --snapshot $r "$d" > "$mf_work/s" 2> "$mf_work/s.err" || bad="$bad $r(exit)"
		long=$([ $r = 1 ] && echo 5 || echo 10)
		got="$(calls "$mf_work/s" ';site_short;malloc$') $(calls "$mf_work/s" ';site_long;malloc$')"
		[ "$got" = "$((r * n * 10)) $long" ] && [ ! -s "$mf_work/s.err" ] || bad="$bad $r($got$(head -c 200 "$mf_work/s.err"))"
	done
	[ "$(totals "$name" "$d") $(cat "$mf_work/$name.err")" = "0 $((3 * n + 2)) $((3 * n * 10)) " ] ||
		bad="$bad end($(totals "$name" "$d") $(head -c 200 "$mf_work/$name.err"))"
	echo "$(ls "$d" | grep -c '\.prof$') $(records "$d/ended.pack") $(records "$d/ended.pack" $(u64 "$d"/snap.1*/snapshot 128))$bad"
}
for how in api signal; do
	is "$(rounds $how $how)" "1 $((3 * n + 1)) $n" \
		"$how: 3 rounds of $n threads, a snapshot after each: exact each time, the ended all packed"
	d=$(ls -d "$mf_work"/malloc_freq.*)
	builds_on=$(u64 "$d"/snap.2*/snapshot 120)
	is "$builds_on" "$([ $how = api ] && echo 0 || echo 1)" "$how: snapshot 2 builds on $builds_on"
	"$MF_PRINT" --collapsed --between 1 3 "$d" > "$mf_work/b" 2> "$mf_work/b.err"
	is "$(calls "$mf_work/b" ';site_short;malloc$') $(calls "$mf_work/b" ';site_long;malloc$') $(cat "$mf_work/b.err")" \
		"$((2 * n * 10)) 5 " "$how: --between 1 3: site_short 2*$n*10, site_long 5 (the long thread's later ones)"
	"$MF_PRINT" --collapsed --since 2 "$d" > "$mf_work/b" 2> "$mf_work/b.err"
	is "$(calls "$mf_work/b" ';site_short;malloc$') $(calls "$mf_work/b" ';site_long;malloc$') $(cat "$mf_work/b.err")" \
		"$((n * 10)) 0 " "$how: --since 2: site_short $n*10, site_long 0"
	"$MF_PRINT" --list "$d" > "$mf_work/l" 2> "$mf_work/l.err"; rc=$?
	is "$rc $(grep -c 'snap\.' "$mf_work/l") $(cat "$mf_work/l.err")" "0 3 " "$how: --list shows the 3, nothing said"
done

# each step of packing failing once (the 5th of its kind): the file stays, the pack is cut
# back, the snapshot packs no more; the next one packs the rest
for fail in WRITE CLOSE UNLINK; do
	is "$(rounds $fail signal MF_TEST_FAIL_$fail=5) $(cat "$mf_work/$fail.run")" "1 $((3 * n + 1)) 4 " \
		"$fail fails once: snapshot 1 packs 4 and keeps the 5th file; every count exact, at the end all packed, nothing said"
done
# ... the last write of the run short: the pack cut back to the last snapshot's pack_len
is "$(rounds lastwrite signal MF_TEST_FAIL_WRITE=$((3 * n + 1))) $(cat "$mf_work/lastwrite.run")" "2 $((3 * n)) $n " \
	"the run's last pack write short: that file stays, every count exact, nothing said"
d=$(ls -d "$mf_work"/malloc_freq.*)
is "$(stat -c %s "$d/ended.pack")" "$(u64 "$d"/snap.3*/snapshot 128)" "... and the pack cut back to snapshot 3's pack_len"
# a removal that fails with the file gone (a network file system's server removed it): the
# record is the thread's, kept; snapshot 1 packs on
is "$(rounds gone signal MF_TEST_FAIL_GONE=5) $(cat "$mf_work/gone.run")" "1 $((3 * n + 1)) $n " \
	"a removal fails, the file gone: its record kept, every count exact, at the end all packed, nothing said"
# ... and the cut back failing too: packing stops in the process, said once; what is left stays
is "$(rounds cutwrite signal MF_TEST_FAIL_WRITE=5 MF_TEST_FAIL_TRUNCATE=1)" "$((3 * n + 2 - 4)) 4 4" \
	"a short write not cut back: 4 packed, the rest stay files, every count exact, nothing said by mf_print"
d=$(ls -d "$mf_work"/malloc_freq.*)
like "$(cat "$mf_work/cutwrite.run")" "^malloc_freq: cannot cut $d/ended.pack back to [0-9]+ bytes after a failed write: Input/output error; no more ended threads' files are packed in this process, they stay as they are \(said once\)$" \
	"... the library says once that it stops"
is "$(rounds cutunlink signal MF_TEST_FAIL_UNLINK=5 MF_TEST_FAIL_TRUNCATE=1)" "$((3 * n + 2 - 4)) 5 4" \
	"a removal failed and not cut back: the record whole beside its file, counted once (live and every snapshot)"
# the pack removed while the process runs: the next snapshot packs nothing (no write at the
# old length, behind a hole), says so once, and leaves the files
rm -rf "$mf_work"/malloc_freq.*
env MALLOC_FREQ_DIR="$mf_work" MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 LD_PRELOAD="$MF_LIB" \
	"$MF_TESTS/prog_pack" ended 20 > "$mf_work/out" 2> "$mf_work/removed.run" &
pid=$!
i=0
while ! grep -q ready "$mf_work/out" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
d="$mf_work/malloc_freq.$pid"
old=$(stat -c %s "$d/ended.pack")
rm "$d/ended.pack"
kill -USR2 $pid
i=0
while [ ! -e "$d/snap.2.signal" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid
wait $pid 2> /dev/null
is "$(ls "$d" | grep -c '\.prof$') $(stat -c %s "$d/ended.pack" 2> /dev/null)" "21 0" \
	"the pack removed while the process runs: snapshot 2 packs none of the 20 ended since (no hole)"
like "$(cat "$mf_work/removed.run")" "^malloc_freq: $d/ended.pack is 0 bytes, not the $old written to it: removed or replaced while the process runs; no more ended threads' files are packed in this process, they stay as they are \(said once\)$" \
	"... and says so once"

# a thread that ended in seccomp strict mode stays listed, its file mapped: no snapshot packs it
# (a chained one passes it over as unchanged), so every snapshot and the end count it once
if grep -q '^Seccomp:' /proc/self/status; then
	rm -rf "$mf_work"/malloc_freq.*
	within 60 env MALLOC_FREQ_DIR="$mf_work" MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 LD_PRELOAD="$MF_LIB" \
		"$MF_TESTS/prog_pack" strict > /dev/null 2> "$mf_work/strict.run"
	rc=$? d=$(ls -d "$mf_work"/malloc_freq.*) got=""
	for r in 1 2 3; do
		got="$got $(totals strict$r --snapshot $r "$d") $(cat "$mf_work/strict$r.err")"
	done
	if [ "$rc" = 3 ]; then # (qemu-user, for one, refuses PR_SET_SECCOMP)
		skip "a thread ended in strict mode: the kernel (or emulator) here refuses strict mode"
	else
		is "$rc$got $(totals strict "$d") $(test -e "$d/ended.pack" && echo pack)" \
			"0 0 2 10  0 2 10  0 2 10  0 2 10 " \
			"a thread ended in strict mode, still listed: snapshots 1-3 and the end count its 10 calls once, nothing packed"
	fi
else
	skip "no seccomp in this kernel"
fi
done_testing
