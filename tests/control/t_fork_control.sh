#!/bin/sh
# The control thread in a pre-forking server (tests/progs/prog_snapshot workers): each worker made
# by fork() starts its own, so MALLOC_FREQ_SNAPSHOT_SIGNAL sent to a worker's pid takes a
# snapshot in that worker's directory with its own counts, and MALLOC_FREQ_SNAPSHOT_INTERVAL
# snapshots each worker; the master's counts hold none of the workers' calls.
. "$srcdir/tests/tap.sh"
P="$MF_TESTS/prog_snapshot"
n=300

# wait_lines FILE N: until FILE has N lines (10 s at most)
wait_lines() {
	i=0
	while [ "$(cat "$1" 2> /dev/null | wc -l)" -lt "$2" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
}
# wait_file PATH: until it exists (10 s at most)
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
}
# threads PID: the names of its threads, sorted, on one line (under qemu-user each name once:
# qemu adds a thread of its own to each process, named as the program)
uniq=
[ "$mf_arch" = "$(uname -m)" ] || uniq=-u
threads() { cat /proc/"$1"/task/*/comm 2> /dev/null | sort $uniq | tr '\n' ' '; }

# the snapshot signal sent to each worker
: > "$mf_work/out"
MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 profile_within 60 "$P" workers $n 2 30 > "$mf_work/out" \
	2> "$mf_work/err" &
run=$!
wait_lines "$mf_work/out" 3
master=$(awk '$1 == "master" { print $2 }' "$mf_work/out")
w1=$(awk '$1 == "worker" && $2 == 1 { print $3 }' "$mf_work/out")
w2=$(awk '$1 == "worker" && $2 == 2 { print $3 }' "$mf_work/out")
is "$(threads "$w1")|$(threads "$w2")" "malloc_freq prog_snapshot |malloc_freq prog_snapshot " \
	"each worker runs a control thread of its own"
kill -USR2 "$w1" "$w2" "$master"
for p in "$w1" "$w2" "$master"; do wait_file "$mf_work/malloc_freq.$p/snap.1.signal"; done
k=1
for p in "$w1" "$w2"; do
	"$MF_PRINT" --collapsed --snapshot signal "$mf_work/malloc_freq.$p" > "$mf_work/s$k" 2> /dev/null
	is "$(calls "$mf_work/s$k" ';site_b;malloc$') $(calls "$mf_work/s$k" ';site_a;malloc$')" \
		"$((k * n)) 0" "worker $k: its signal snapshot, in its own directory, holds its $((k * n)) calls only"
	k=$((k + 1))
done
"$MF_PRINT" --collapsed --snapshot signal "$mf_work/malloc_freq.$master" > "$mf_work/sm" 2> /dev/null
is "$(calls "$mf_work/sm" ';site_a;malloc$') $(calls "$mf_work/sm" ';site_b;malloc$')" "$n 0" \
	"the master's signal snapshot holds its own $n calls, none of the workers'"
is "$(ls -d "$mf_work"/malloc_freq.*/snap.* | wc -l)" 3 "one snapshot per process signalled, no other"
kill -TERM "$w1" "$w2"
wait $run; is "$?" 0 "the master and its workers exit 0"
is "$(cat "$mf_work/err")" "" "nothing said on stderr"
"$MF_PRINT" --collapsed "$mf_work/malloc_freq.$master" > "$mf_work/m" 2> /dev/null
is "$(calls "$mf_work/m" ';site_a;malloc$') $(calls "$mf_work/m" ';site_b;malloc$')" "$n 0" \
	"the master's final profile: its $n calls, none of the workers'"

# interval snapshots in workers that live 1.5 s
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_SNAPSHOT_INTERVAL=0.3 profile_within 60 "$P" workers $n 2 1.5 > "$mf_work/out" \
	2> "$mf_work/err"
is "$?" 0 "interval 0.3 s, workers living 1.5 s: exits 0"
for k in 1 2; do
	p=$(awk -v k=$k '$1 == "worker" && $2 == k { print $3 }' "$mf_work/out")
	"$MF_PRINT" --list "$mf_work/malloc_freq.$p" > "$mf_work/list" 2> /dev/null
	snaps=$(awk 'NR > 1 && /interval/' "$mf_work/list" | wc -l)
	[ "$snaps" -ge 3 ]; ok $? "worker $k takes interval snapshots in its own directory ($snaps)"
	last=$(awk 'NR > 1 && /interval/ { s = $1 } END { print s }' "$mf_work/list")
	"$MF_PRINT" --collapsed --snapshot "$last" "$mf_work/malloc_freq.$p" > "$mf_work/s" 2> /dev/null
	is "$(calls "$mf_work/s" ';site_b;malloc$') $(calls "$mf_work/s" ';site_a;malloc$')" "$((k * n)) 0" \
		"worker $k: its last interval snapshot holds its $((k * n)) calls only"
done

# no setting, no thread: not in the master, not in a worker
rm -rf "$mf_work"/malloc_freq.*
: > "$mf_work/out"
profile_within 60 "$P" workers 10 1 30 > "$mf_work/out" 2> /dev/null &
run=$!
wait_lines "$mf_work/out" 2
w1=$(awk '$1 == "worker" { print $3 }' "$mf_work/out")
master=$(awk '$1 == "master" { print $2 }' "$mf_work/out")
is "$(threads "$master")|$(threads "$w1")" "prog_snapshot |prog_snapshot " \
	"without the settings, neither the master nor its worker runs a control thread"
kill -TERM "$w1"
wait $run; is "$?" 0 "and they exit 0"
done_testing
