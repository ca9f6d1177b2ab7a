#!/bin/sh
# Snapshots and recording switched from outside the program: MALLOC_FREQ_TOGGLE_SIGNAL,
# MALLOC_FREQ_SNAPSHOT_SIGNAL, MALLOC_FREQ_SNAPSHOT_INTERVAL (tests/progs/prog_snapshot.c). Counts
# exact between toggles; a program's own handler respected; a reader looping over a live
# directory while 4 threads allocate and snapshot signals arrive every few ms never fails and
# never sees a total go down; snapshots while threads end (slowly, in a test build) that
# never decrease; interval snapshots that never decrease, the last within one interval of the
# end; and interval snapshots on a disk that fills: the first that cannot be written is said
# once, none is left half made, and they come again when there is room.
. "$srcdir/tests/tap.sh"
P="$MF_TESTS/prog_snapshot"
# busy_signalled LIB SECONDS: prog_snapshot's 4 busy threads under LIB, snapshots on SIGUSR2,
# in the background; returns once it says it is ready, with its pid in $pid
busy_signalled() {
	rm -rf "$mf_work"/malloc_freq.* "$mf_work/ready"
	MALLOC_FREQ_DIR="$mf_work" MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 LD_PRELOAD="$1" "$P" busy "$2" \
		> "$mf_work/ready" &
	pid=$!
	i=0
	while [ ! -s "$mf_work/ready" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
	# (ready comes before the first call, which makes the process directory: under qemu-user
	# the directory was not there yet when looked for)
	while ! ls -d "$mf_work"/malloc_freq.* > /dev/null 2>&1 && [ $i -lt 2000 ]; do
		sleep 0.01; i=$((i + 1))
	done
}
# decreases LIST: how often a snapshot's total (mf_print --list) is below the one before it
decreases() { awk 'NR > 1 { if ($4 + 0 < prev) d++; prev = $4 + 0 } END { print d + 0 }' "$1"; }
n=500
MALLOC_FREQ_START=off MALLOC_FREQ_TOGGLE_SIGNAL=USR1 MALLOC_FREQ_SNAPSHOT_SIGNAL=SIGUSR2 \
	profile_within 60 "$P" signals $n > /dev/null 2> "$mf_work/err"; rc=$?
is "$rc" 0 "signals: exits 0 (SIGUSR2's snapshot appeared)"
is "$(cat "$mf_work/err")" "" "nothing said on stderr"
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --collapsed "$dir" > "$mf_work/c" 2> /dev/null
is "$(calls "$mf_work/c" ';site_a;malloc$') $(calls "$mf_work/c" ';site_b;malloc$') $(calls "$mf_work/c" ';site_p3;malloc$')" \
	"0 $n 0" "only the calls between the two SIGUSR1 are recorded"
"$MF_PRINT" --collapsed --snapshot signal "$dir" > "$mf_work/s" 2> /dev/null
is "$(calls "$mf_work/s" ';site_b;malloc$')" $n "the SIGUSR2 snapshot holds them"
like "$("$MF_PRINT" "$dir" 2> /dev/null)" "^  $((2 * n)) calls were made while recording was off" \
	"the $((2 * n)) calls made while off are counted"

# a program's own handler for the signal is the program's: it runs, no snapshot is taken
rm -rf "$mf_work"/malloc_freq.*
out=$(MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 profile_within 60 "$P" handler); rc=$?
is "$rc:$out" "0:own handler ran 1" "the program's own SIGUSR2 handler runs"
sleep 0.2
ls -d "$mf_work"/malloc_freq.*/snap.* > /dev/null 2>&1; is "$?" 2 "and no snapshot is taken"
# a signal ignored at start stays ignored, and that is said
rm -rf "$mf_work"/malloc_freq.*
# (the library for the program only, not for sh: the machine's own, where the library may be
# another processor's)
err=$(MALLOC_FREQ_DIR="$mf_work" MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 \
	sh -c 'trap "" USR2; LD_PRELOAD="$1" exec "$0" reset 1 1' "$P" "$MF_LIB" 2>&1 > /dev/null)
is "$err" "malloc_freq: MALLOC_FREQ_SNAPSHOT_SIGNAL: SIGUSR2 is ignored at start; left as it is (off)" \
	"a signal ignored at start is left ignored, and said"
for v in "MALLOC_FREQ_SNAPSHOT_SIGNAL=KILL" "MALLOC_FREQ_TOGGLE_SIGNAL=nope" "MALLOC_FREQ_SNAPSHOT_INTERVAL=0" \
	"MALLOC_FREQ_SNAPSHOT_INTERVAL=1.2345"; do
	err=$(env "$v" MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$P" reset 1 1 2>&1 > /dev/null)
	like "$err" "^malloc_freq: ${v%%=*}=\"${v#*=}\" is not .*; using off$" "$v: one line on stderr, off"
done

# a reader looping over a live directory while 4 threads allocate and snapshots are signalled
busy_signalled "$MF_LIB" 3
( while kill -USR2 $pid 2> /dev/null; do sleep 0.005; done ) &
sig=$!
dir=$(ls -d "$mf_work"/malloc_freq.* 2> /dev/null | head -1)
reads=0 errors=0 down=0 last=0
while kill -0 $pid 2> /dev/null; do
	t=$("$MF_PRINT" --since 0 "$dir" 2> "$mf_work/rerr" | awk 'NR == 1 { print $2 }')
	[ -s "$mf_work/rerr" ] && errors=$((errors + 1)) && sed 's/^/# /' "$mf_work/rerr"
	[ "${t:-0}" -lt "$last" ] && down=$((down + 1))
	last=${t:-0} reads=$((reads + 1))
	"$MF_PRINT" --list "$dir" > "$mf_work/list" 2> "$mf_work/rerr" || errors=$((errors + 1))
done
wait $pid; rc=$?
kill $sig 2> /dev/null; wait $sig 2> /dev/null
is "$rc" 0 "4 threads allocating under snapshot signals every 5 ms: exits 0"
is "$errors:$down" "0:0" "$reads live reads and --lists: no error, no total going down"
"$MF_PRINT" --list "$dir" > "$mf_work/list" 2> /dev/null
snaps=$(awk 'NR > 1' "$mf_work/list" | wc -l)
[ "$snaps" -ge 10 ]; ok $? "many snapshots taken ($snaps)"
is "$(decreases "$mf_work/list")" 0 "their totals never decrease, in number order"
ls -a "$dir" | grep -q '\.tmp$'; is "$?" 1 "no temporary snapshot left"

# Threads that end while snapshots are signalled, each pausing 50 ms once it has left the
# threads' list (a test build's pause, tests/progs/libmalloc_freq_slowexit.so): a snapshot copies
# the running threads' files, then links the ended ones, so an ending thread's file must be
# one or the other at every moment, or the snapshot misses its counts.
busy_signalled "$MF_TESTS/.libs/libmalloc_freq_slowexit.so" 1
while kill -USR2 $pid 2> /dev/null; do sleep 0.005; done
wait $pid; rc=$?
is "$rc" 0 "4 threads ending slowly under snapshot signals every 5 ms: exits 0"
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --list "$dir" > "$mf_work/list" 2> /dev/null
during=$(awk 'NR > 1' "$mf_work/list" | wc -l)
[ "$during" -ge 5 ]; ok $? "snapshots taken ($during)"
is "$(decreases "$mf_work/list")" 0 "their totals never decrease, in number order, while the threads end"

# the interval: snapshots that never decrease, the last within one interval of the end
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_SNAPSHOT_INTERVAL=0.5 profile_within 60 "$P" busy 3.2; is "$?" 0 "interval 0.5 s, 3.2 s: exits 0"
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --list "$dir" > "$mf_work/list" 2> /dev/null
is "$(awk 'NR > 1 && /interval/' "$mf_work/list" | wc -l)" 6 "6 interval snapshots"
is "$(decreases "$mf_work/list")" 0 "their totals never decrease"
total=$("$MF_PRINT" "$dir" 2> /dev/null | awk 'NR == 1 { print $2 }')
lastsnap=$(awk 'END { print $4 }' "$mf_work/list")
since=$("$MF_PRINT" --since 6 "$dir" 2> /dev/null | awk 'NR == 1 { print $2 }')
[ "$lastsnap" -le "$total" ] && [ $((total - lastsnap)) -eq "$since" ]
ok $? "the last one ($lastsnap) is the final profile ($total) less what --since 6 shows ($since)"

# a disk that fills (a tmpfs of 8 MiB, filled to the last byte while the program runs)
full="$mf_work/full"
mkdir "$full"
if ! mount -t tmpfs -o size=8m malloc_freq_test "$full" 2> /dev/null; then
	for n in 1 2 3 4 5 6 7; do skip "a disk that fills: cannot mount a small tmpfs here (needs root)"; done
	done_testing
	exit 0
fi
trap 'umount "$full" 2> /dev/null; rm -rf "$mf_work"' EXIT
# within_30 COND: waits until the shell condition COND holds (30 s at most); its status
within_30() {
	i=0
	until eval "$1" || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
	eval "$1"
}
snaps() { ls -d "$full"/malloc_freq.*/snap.* 2> /dev/null | wc -l; }
timeout -k 5 120 env MALLOC_FREQ_SNAPSHOT_INTERVAL=0.05 MALLOC_FREQ_DIR="$full" LD_PRELOAD="$MF_LIB" \
	"$P" until "$mf_work/stop" > "$mf_work/out" 2> "$mf_work/err" &
pid=$!
within_30 '[ "$(snaps)" -ge 2 ]'
dd if=/dev/zero of="$full/filler" bs=64k 2> /dev/null # (until no byte is left)
within_30 '[ -s "$mf_work/err" ]'
ok $? "the disk full: a snapshot that cannot be written is said on stderr"
within_30 '[ -z "$(ls -d "$full"/malloc_freq.*/.snap.* 2> /dev/null)" ]' # (one being made)
before=$(snaps)
sleep 0.5 # (10 intervals more, each tried on the full disk)
is "$(snaps)" "$before" "... no snapshot is made meanwhile"
rm "$full/filler"
within_30 '[ "$(snaps)" -gt "$before" ]'
ok $? "with room again, snapshots come again ($before before, $(snaps) now)"
touch "$mf_work/stop"
wait $pid
is "$?:$(sed 's/[0-9]*$//' "$mf_work/out")" "0:calls " "the program exits 0, unharmed"
like "$(cat "$mf_work/err")" "^malloc_freq: cannot write snapshot snap\.$((before + 1))\.interval in $full/malloc_freq\.[0-9]+: No space left on device; .*\(said once\)$" \
	"... said once, in one line that names the snapshot, the directory and why"
dir=$(ls -d "$full"/malloc_freq.*)
is "$(ls -a "$dir" | grep -c '^\.snap')" 0 "... no snapshot is left half made"
"$MF_PRINT" --collapsed "$dir" > "$mf_work/c" 2> /dev/null
is "$(calls "$mf_work/c" ';site_p1;malloc$')" "$(sed 's/^calls //' "$mf_work/out")" "... and every call is in the profile"
done_testing
