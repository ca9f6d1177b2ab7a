#!/bin/sh
# The launcher, run uninstalled from the build tree as a user would run it: it finds the build
# tree's library by itself, profiles a whole process tree (a wrapper script, fork, exec) under
# one directory, passes the program's exit status through and dies of the program's signal,
# says what was recorded, and refuses bad options with a usage error.
. "$srcdir/tests/tap.sh"
launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
[ -x "$launcher" ] || bail "no launcher at $launcher"
prog=$MF_TESTS/prog_tree
# (no LD_PRELOAD or MALLOC_FREQ_DIR from the caller: the launcher must find everything itself)
unset LD_PRELOAD MALLOC_FREQ_DIR
cd "$mf_work" || bail "cd $mf_work"

# the default directory: malloc_freq.<pid> of the program, here, holding the program's own
out=$("$launcher" "$prog" alloc 100 0 2> err); rc=$?
is "$rc" 0 "alloc 100 0: exit status 0"
set -- malloc_freq.*
is "$#" 1 "one output directory in the current directory"
d=$1
[ -d "$d/$d" ]; ok $? "the program's profile is $d/$d: the output is named after its pid"
like "$(sed -n 1p err)" '^malloc_freq: 100 calls, 4\.7 KiB requested; 1 process, 1 thread$' \
	"the summary line: 100 calls of 48 bytes, 1 process, 1 thread"
is "$(sed -n 2p err)" "malloc_freq: report: $(cd "$(dirname "$MF_PRINT")" && pwd -P)/mf_print $mf_work/$d" \
	"the second line: the mf_print command, with absolute paths"
"$MF_PRINT" --collapsed "$d" > c.txt 2> /dev/null; ok $? "mf_print reads the output directory"
is "$(calls c.txt ';site_tree;malloc$')" 100 "mf_print: site_tree's 100 calls"
total=$("$MF_PRINT" "$d" 2> /dev/null | sed -n '1s/^malloc_freq: \([0-9]*\) calls.*/\1/p')
is "$total" 100 "mf_print's summary has the launcher's total"

# exit statuses pass through; another run's directory is not reused
"$launcher" "$prog" alloc 5 3 2> /dev/null; is "$?" 3 "alloc 5 3: exit status 3 passes through"
set -- malloc_freq.*
is "$#" 2 "a second run: a second directory"
"$launcher" -q "$prog" alloc 5 0 2> err; is "$?" 0 "-q: exit 0"
is "$(cat err)" "" "-q: no summary"

# -o DIR, a wrapper shell script and a process tree: every process under DIR
cat > wrap.sh <<SH
#!/bin/sh
# a wrapper as packages install them: sets things up, then runs the real program
"$prog" forkexit 30 20 || exit 9
"$prog" exec 10 40
exec "$prog" alloc 7 5
SH
chmod +x wrap.sh
"$launcher" -o tree ./wrap.sh 2> err; rc=$?
is "$rc" 5 "wrapper script: the status of the program it exec'd (5)"
"$MF_PRINT" --collapsed --merge-processes tree > t.txt 2> /dev/null; ok $? "mf_print reads -o tree"
is "$(calls t.txt ';site_tree;malloc$')" 107 "every process of the tree: 30 + 20 + 10 + 40 + 7 calls"
n=$(ls -d tree/malloc_freq.* | wc -l)
# (the shell, the forkexit parent and child, the exec'd image pair, the shell's exec image)
[ "$n" -ge 5 ]; ok $? "the tree's processes each have their directory under tree/ ($n)"
is "$(ls -d malloc_freq.* | wc -l)" 3 "nothing written outside -o (the three directories of the runs before)"
procs=$("$MF_PRINT" --processes tree 2> /dev/null)
like "$procs" "_exit\(7\): .*prog_tree forkexit 30 20" "the forked child is there, under tree/"
if native "the summary of a tree with a shell in it"; then
like "$(sed -n 1p err)" '^malloc_freq: [0-9]+ calls, .* requested; [0-9]+ processes, [0-9]+ threads$' \
	"the summary counts the tree"
lsum=$(sed -n -E '1s/^malloc_freq: ([0-9]+) calls, .*; ([0-9]+) processes, ([0-9]+) threads$/\1 \2 \3/p' err)
psum=$("$MF_PRINT" tree 2> /dev/null | sed -n -E '1s/^malloc_freq: ([0-9]+) calls, .*; ([0-9]+) threads of ([0-9]+) processes .*/\1 \3 \2/p')
is "$lsum" "$psum" "the summary's calls, processes and threads are mf_print's"
fi
"$launcher" -o tree "$prog" alloc 1 0 2> err; rc=$?
is "$rc" 125 "-o with a directory that is not empty: refused (125)"
like "$(cat err)" "tree is not empty" "and it says why"

# death by signal: the launcher dies of the same signal, after its summary
sh -c '"$1" -o killed "$2" kill 70 2> err.kill; echo "status $?"' sh "$launcher" "$prog" > st
is "$(cat st)" "status $((128 + 9))" "program killed by SIGKILL: the launcher dies of SIGKILL (137)"
like "$(sed -n 1p err.kill)" '^malloc_freq: 70 calls, ' "and says first what was recorded"
# The launcher, the program's parent, writes its end as a profiled parent's wait would: the
# signal no handler of the library's sees (it read 'ended unrecorded'), and the status of a
# program it exec'd that made no record (prog_tree 'alloc 0 8' allocates nothing)
like "$("$MF_PRINT" --processes killed 2> /dev/null)" "\[prog_tree\] [0-9]+, killed by SIGKILL: " \
	"mf_print: the program was killed by SIGKILL"
"$launcher" -q -o quiet "$prog" execstatus 20 8; rc=$?
is "$rc" 8 "an exec into a program with no record: the launcher exits 8"
like "$("$MF_PRINT" --processes quiet 2> /dev/null)" \
	"\[prog_tree\] [0-9]+, ended unrecorded \(then its pid exited 8\): " "and the record says so"
# a program that dumps core: a parent of the launcher sees "core dumped" as it would plain
# (the launcher dumps a core of its own, of none of its memory: into the output directory
# when core_pattern is relative, as here, never over the program's), and no core where
# plain has none (no core limit)
pattern=$(cat /proc/sys/kernel/core_pattern 2> /dev/null)
# fname CORE: the command name a core file names (NT_PRPSINFO's pr_fname)
fname() { file "$1" 2> /dev/null | sed -n "s/.*core file.*from '\([^ ']*\).*/\1/p" | xargs -r basename; }
case $pattern in
'|'*) skip "core_pattern is a pipe ($pattern): the cores go to its program" ;;
*) native "cores (under qemu-user, qemu writes them)" || pattern=skipped ;;
esac
case $pattern in
'|'* | skipped) ;;
*)
	for lim in unlimited 0; do
		mkdir -p "core.$lim/plain" "core.$lim/launched"
		plain=$(cd "core.$lim/plain" && ulimit -c $lim && "$MF_TESTS/run_status" -k "$MF_TESTS/prog_kill" 5 segv 2>&1)
		got=$(cd "core.$lim/launched" && ulimit -c $lim && "$MF_TESTS/run_status" -k "$launcher" -q -o prof "$MF_TESTS/prog_kill" 5 segv 2>&1)
		is "$got" "$plain" "ulimit -c $lim, a program killed by SIGSEGV: its launcher's parent sees what plain's sees ($plain)"
	done
	if [ "$pattern" = core ] && [ "$(cat /proc/sys/kernel/core_uses_pid)" = 0 ]; then
		is "$(fname core.unlimited/plain/core):$(fname core.unlimited/launched/core):$(fname core.unlimited/launched/prof/core)" \
			"prog_kill:prog_kill:malloc_freq" "... the program's core where it ran, the launcher's in its output directory"
		is "$(find core.0 -type f -name 'core*' | wc -l)" 0 "... and with ulimit -c 0, no core at all"
	else
		skip "core_pattern is '$pattern': where the cores go is not looked at"
	fi
	;;
esac
sh -c '"$1" -o term sh -c "kill -TERM \$\$" 2> /dev/null; echo "status $?"' sh "$launcher" > st
is "$(cat st)" "status $((128 + 15))" "program killed by SIGTERM: the launcher dies of SIGTERM (143)"
# a SIGTERM sent to the launcher is passed on to the program
rm -f ready # (the background job empties it only when it starts: a stale one would say ready)
"$launcher" -o fwd "$prog" wait 3 > ready 2> /dev/null &
lpid=$!
for i in $(seq 50); do [ -s ready ] && break; sleep 0.1; done
kill -TERM "$lpid"
wait "$lpid"; is "$?" 143 "SIGTERM to the launcher: the program gets it, the launcher dies of it"

# a launcher started with SIGINT ignored (a background job) leaves it ignored for the program
sh -c 'trap "" INT; "$1" -o ign sh -c "kill -INT \$\$; echo alive" 2> /dev/null' sh "$launcher" > st 2> /dev/null
is "$(cat st)" alive "SIGINT ignored when the launcher starts: still ignored in the program"

# settings: options become the MALLOC_FREQ_* variables; LD_PRELOAD is kept, not clobbered
LD_PRELOAD=libm.so.6 "$launcher" -o env -d 7 -s 1 --seed 42 --unwind libunwind sh -c \
	'echo "$LD_PRELOAD|$MALLOC_FREQ_DIR|$MALLOC_FREQ_DEPTH|$MALLOC_FREQ_SAMPLE|$MALLOC_FREQ_SEED|$MALLOC_FREQ_UNWIND"' \
	> envs 2> /dev/null
lib=$(cd "$(dirname "$MF_LIB")" && pwd -P)/$(basename "$MF_LIB")
is "$(cat envs)" "$lib libm.so.6|$mf_work/env|7|1|42|libunwind" \
	"the program's environment: the library (absolute) first, the LD_PRELOAD given kept; the settings"
"$launcher" -o env2 --weight time --start-off --snapshot-signal USR1 --toggle-signal RTMIN+2 \
	--snapshot-interval 0.5 sh -c \
	'echo "$MALLOC_FREQ_WEIGHT|$MALLOC_FREQ_START|$MALLOC_FREQ_SNAPSHOT_SIGNAL|$MALLOC_FREQ_TOGGLE_SIGNAL|$MALLOC_FREQ_SNAPSHOT_INTERVAL"' \
	> envs 2> /dev/null
is "$(cat envs)" "time|off|$(kill -l USR1 2> /dev/null || echo 10)|$(($(kill -l RTMIN 2> /dev/null || echo 34) + 2))|0.5" \
	"--weight, --start-off, the signals (as numbers) and the interval: the program's environment"
"$launcher" -o env3 --lifetimes sh -c 'echo "$MALLOC_FREQ_LIFETIMES"' > envs 2> /dev/null
is "$(cat envs)" 1 "--lifetimes: MALLOC_FREQ_LIFETIMES=1 in the program's environment"
"$launcher" -o env4 --lifetimes -s 10 sh -c 'echo "$MALLOC_FREQ_LIFETIMES $MALLOC_FREQ_SAMPLE"' > envs 2> /dev/null
is "$(cat envs)" "1 10" "--lifetimes -s 10: both in the program's environment"
"$launcher" -o off --start-off "$prog" alloc 50 0 2> err; is "$?" 0 "--start-off: the program runs"
like "$("$MF_PRINT" off 2> /dev/null)" "^  50 calls were made while recording was off" \
	"--start-off: its 50 calls counted as made while recording was off"
# the snapshot signal sent to the launcher reaches the program, which takes its snapshot
rm -f ready
"$launcher" -o snap --snapshot-signal USR2 "$prog" wait 3 > ready 2> /dev/null &
lpid=$!
for i in $(seq 100); do [ -s ready ] && break; sleep 0.05; done
kill -USR2 "$lpid"
for i in $(seq 100); do ls -d snap/malloc_freq.*/snap.* > /dev/null 2>&1 && break; sleep 0.05; done
ls -d snap/malloc_freq.*/snap.* > /dev/null 2>&1; ok $? "SIGUSR2 to the launcher: a snapshot in the program's directory"
kill -TERM "$lpid"
wait "$lpid"; is "$?" 143 "and the launcher still dies of the program's SIGTERM"
# sent as soon as the launcher has made its output directory, before the program's library
# has its handler: held until then (it killed the program, and the launcher of the same)
# (under qemu-user a signal the launcher has blocked while it has no handler yet is not held:
# qemu keeps the host's signals unblocked, and the launcher dies of it, status 138)
if native "a snapshot signal sent at once (qemu-user does not hold a blocked signal without a handler)"; then
	good=0
	for i in 1 2 3; do
		"$launcher" -q -o early$i --snapshot-signal USR1 "$prog" wait 3 > /dev/null 2>&1 &
		lpid=$!
		n=0; until [ -d early$i ] || [ $n -gt 200000 ]; do n=$((n + 1)); done
		kill -USR1 "$lpid"
		for k in $(seq 100); do ls -d early$i/malloc_freq.*/snap.* > /dev/null 2>&1 && break; sleep 0.05; done
		kill -TERM "$lpid"; wait "$lpid"; rc=$?
		[ "$rc" = 143 ] && ls -d early$i/malloc_freq.*/snap.* > /dev/null 2>&1 && good=$((good + 1))
	done
	is "$good" 3 "a snapshot signal sent at once: held for the program, a snapshot each time (3 runs)"
fi
"$launcher" -o samp -s 10 --seed 1 "$prog" alloc 20000 0 2> err
like "$(sed -n 1p err)" '^malloc_freq: ~[0-9]+ calls, .*\(sampled: estimates\)$' "--sample: the summary says estimates"
"$launcher" -o rep --report "$prog" alloc 42 0 > rep.txt 2> /dev/null; rc=$?
is "$rc" 0 "--report: the program's status"
like "$(sed -n 1p rep.txt)" '^malloc_freq: 42 calls, ' "--report: mf_print's report follows on stdout"
like "$(cat rep.txt)" 'site_tree' "--report: with the tree"
# the program's own options are its own
"$launcher" -o opts sh -c 'echo "$1"' sh --report > o.txt 2> /dev/null
is "$(cat o.txt)" "--report" "options after the program are the program's"

# a program the library cannot enter (static): the summary says nothing was recorded, and why
printf '#include <stdlib.h>\nint main(void) { free(malloc(8)); return 4; }\n' > static.c
if ${CC:-cc} -static -o static static.c 2> /dev/null; then
	"$launcher" -o static.prof ./static 2> err; is "$?" 4 "a static program: its status"
	like "$(sed -n 1p err)" "^malloc_freq: nothing recorded in $mf_work/static.prof: .*static" "a static program: nothing recorded, and why"
	"$launcher" -q -o static.q ./static 2> err
	is "$(grep -c '^malloc_freq: nothing recorded' err):$(wc -l < err)" "1:1" "... said under -q too, and nothing else"
else
	echo "# no static C library: the static program is not tried"
fi

# not found, not executable, usage errors
"$launcher" -o nf ./no-such-program 2> err; is "$?" 127 "a program not found: 127"
like "$(cat err)" "no-such-program: No such file or directory" "and it says so"
[ ! -e nf ]; ok $? "and the output directory it made is gone"
"$launcher" -o nx ./wrap.txt 2> /dev/null; is "$?" 127 "a missing file: 127"
: > plain.txt
"$launcher" -o nx2 ./plain.txt 2> /dev/null; is "$?" 126 "a file that cannot be executed: 126"
for args in "" "-o" "--depth 0 true" "--depth 1025 true" "--sample x true" "--sample 0 true" \
	"--unwind fast true" "--cache relative true" "--seed -1 true" "--bogus true" "-z true" \
	"--weight bytes true" "--snapshot-signal KILL true" "--snapshot-signal 33 true" \
	"--toggle-signal nope true" "--snapshot-interval 0 true" "--snapshot-interval 1.2345 true" \
	"--snapshot-signal USR1 --toggle-signal SIGUSR1 true" "--snapshot-signal SEGV true" \
	"--toggle-signal SIGBUS true" "--snapshot-signal 4 true" "--report=1 true" "--snap USR1 true"; do
	# shellcheck disable=SC2086
	"$launcher" $args > /dev/null 2> err; rc=$?
	is "$rc" 2 "usage error: '$args' exits 2"
	like "$(cat err)" "Try 'malloc_freq --help'" "'$args': says where to look"
done
# a library whose path has a space: LD_PRELOAD cannot name it (the loader looked for its
# halves, and the program ran unprofiled): exit 125, said
mkdir -p "sp ace/launcher" "sp ace/lib/.libs" "sp ace/mf_print"
cp "$launcher" "sp ace/launcher/" && cp "$MF_LIB" "sp ace/lib/.libs/" && cp "$MF_PRINT" "sp ace/mf_print/"
"sp ace/launcher/malloc_freq" -o spaced "$prog" alloc 10 0 > /dev/null 2> err; rc=$?
like "$rc $(cat err)" "^125 malloc_freq: the library's path has a space or a colon, which LD_PRELOAD cannot hold: .*/sp ace/lib/.libs/libmalloc_freq.so" \
	"a library at a path with a space: exit 125, and the path named"
# -o makes the directories it lies in; without -o, the output goes in MALLOC_FREQ_DIR if set
"$launcher" -q -o deep/er/out "$prog" alloc 5 0; rc=$?
is "$rc:$(ls deep/er/out | wc -l)" "0:1" "-o deep/er/out: made with its parents, the profile in it"
mkdir envdir
MALLOC_FREQ_DIR="$PWD/envdir" "$launcher" -q "$prog" alloc 5 0; rc=$?
is "$rc:$(ls -d envdir/malloc_freq.* | wc -l)" "0:1" "MALLOC_FREQ_DIR set, no -o: the output directory is made there"
# after malloc_freq_reset, the summary's counts are the whole run's, and it says mf_print's
# are not (400 calls before the reset, 500 after)
"$launcher" -o rst "$MF_TESTS/prog_snapshot" reset 400 500 > /dev/null 2> err
like "$(cat err)" "^malloc_freq: 9[0-9][0-9] calls.*
malloc_freq: these are the whole run's counts: the program called malloc_freq_reset" "after a reset: the whole run's counts, and a line says mf_print counts from the reset"
# the message names the option as given (it read "unknown option '-r'", or a control byte)
"$launcher" --report=1 true 2> err; like "$(head -1 err)" "^malloc_freq: --report takes no value$" "--report=1: --report takes no value"
"$launcher" --start-off=1 true 2> err; like "$(head -1 err)" "^malloc_freq: --start-off takes no value$" "--start-off=1: named, not a byte"
"$launcher" --snap USR1 true 2> err; like "$(head -1 err)" "^malloc_freq: '--snap' is the start of more than one option$" "--snap: ambiguous, and said so"
# values the library takes, the launcher takes (the library refused a seed near 2^64 that the
# launcher let through; the launcher refused an interval the library took)
"$launcher" -q -o seedmax --seed 18446744073709551615 "$prog" alloc 10 0 2> err; rc=$?
is "$rc:$(cat err)" "0:" "--seed 18446744073709551615: taken by both, no warning"
"$launcher" -q -o ival --snapshot-interval 000010 "$prog" alloc 10 0 2> err; rc=$?
is "$rc:$(cat err)" "0:" "--snapshot-interval 000010: taken, as the library takes it"
# a fault's signal is refused by the library too: its handler would return to the fault
MALLOC_FREQ_SNAPSHOT_SIGNAL=SEGV MALLOC_FREQ_DIR="$PWD" LD_PRELOAD="$MF_LIB" "$prog" alloc 10 0 2> err
like "$(cat err)" "MALLOC_FREQ_SNAPSHOT_SIGNAL=\"SEGV\" is not a signal a handler may take.*; using off" "MALLOC_FREQ_SNAPSHOT_SIGNAL=SEGV: refused, and said so"
"$launcher" --help > help.txt; ok $? "--help exits 0"
like "$(cat help.txt)" "MALLOC_FREQ_SAMPLE" "--help names the variables the options set"
done_testing
