#!/bin/sh
# malloc_freq --attach PID and --detach PID on a running program (tests/progs/prog_attach, driven a
# line at a time through a fifo, as a server is by its clients): the calls made between attach
# and detach counted exactly, in a thread that existed at attach too and in a library opened
# after it; the program's malloc slot led back at detach; a block allocated before
# attach and freed after is no crash, with lifetimes too; after detach no thread of the
# profiler's is left, and the program's output, errno, signals and exit status are as without
# it; mf_print says the process was detached; a program linked with the API's stub (its own
# malloc_freq_dir) detached through the library's handle; --attach --wait until SIGINT or the
# program's end; a process that cannot or must not be attached to, or cannot make its
# directory, is refused, saying why.
. "$srcdir/tests/tap.sh"
launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
[ -x "$launcher" ] || bail "no launcher at $launcher"
prog=$MF_TESTS/prog_attach
plugin=$MF_TESTS/.libs/plugin.so
[ -f "$plugin" ] || bail "no $plugin"
unset LD_PRELOAD MALLOC_FREQ_DIR
cd "$mf_work" || bail "cd $mf_work"
command -v gdb > /dev/null || skip_all "no gdb: --attach and --detach run it"
# (a program qemu-user runs is qemu to gdb and to the launcher: a static program, refused)
[ "$mf_arch" = "$(uname -m)" ] ||
	skip_all "the program is run by qemu-user, a static program to the launcher: nothing to attach to"
sleep 60 & sleeper=$!
gdb -nx -q -batch -p "$sleeper" < /dev/null > probe 2>&1
kill "$sleeper"; wait "$sleeper" 2> /dev/null
if grep -q 'ptrace: \|not permitted\|Could not attach' probe; then
	skip_all "this user may not trace a process here ($(grep -m1 'ptrace: \|not permitted\|Could not attach' probe))"
fi

# The program started with its input and output on fifos (fds 3 and 4 here); its pid in $pid.
# It starts with no MALLOC_FREQ_ variable but those the arguments give it (make check-fallback
# sets one for the library: the launcher passes it on while attaching, the program never sees
# it).
start() {
	rm -f in out; mkfifo in out
	# shellcheck disable=SC2046 # (one -u NAME per variable)
	env $(env | sed -n 's/^\(MALLOC_FREQ_[A-Za-z0-9_]*\)=.*/-u \1/p') \
		"$@" "$prog" "$plugin" < in > out & pid=$!
	exec 3> in 4< out
}
# One line to the program, its answer kept in the file $1.
send() { echo "$2" >&3; read -r answer <&4; echo "$answer" >> "$1"; }
# Its end: its status in $status.
finish() { send "$1" q; exec 3>&- 4<&-; wait "$pid"; status=$?; }
tasks() { ls "/proc/$pid/task" | wc -l; }
ours() { cat /proc/"$pid"/task/*/comm 2> /dev/null | grep -c '^malloc_freq'; }
# The program's whole conversation; $2 and $3 run where attach and detach go.
run() {
	: > "$1"
	send "$1" a100; send "$1" t100
	send "$1" g
	$2
	: > during.txt; send during.txt g
	send "$1" a50; send "$1" t30; send "$1" p40; send "$1" f; send "$1" e; send "$1" s
	$3
	send "$1" a70; send "$1" t20; send "$1" p10; send "$1" e; send "$1" s; send "$1" g
}

start env -u MALLOC_FREQ_CACHE
run plain.txt
finish plain.txt
is "$status" 7 "without the profiler: status 7"

# attached: counted from attach to detach only
attach() {
	before=$(tasks)
	"$launcher" --attach "$pid" -o att 2> attach.err; attach_rc=$?
	"$launcher" --attach "$pid" -o again 2> again.err; again_rc=$?
}
detach() {
	"$launcher" --detach "$pid" 2> detach.err; detach_rc=$?
	after=$(tasks); after_ours=$(ours)
	"$MF_PRINT" --processes att > running.proc 2> /dev/null
}
start env -u MALLOC_FREQ_CACHE
run attached.txt attach detach
finish attached.txt
"$MF_PRINT" --processes att > ended.proc 2> /dev/null
# (the detach comes seconds of gdb's work after its record was made)
like "$(cat running.proc)" "\[prog_attach\] $pid, still running, detached at \+[0-9]+\.[0-9] s: " \
	"mf_print --processes: a process detached from and running, said so"
like "$(cat ended.proc)" "\[prog_attach\] $pid, detached at \+[0-9]+\.[0-9] s: " \
	"... and once it ended, detached (not ended unrecorded)"
"$MF_PRINT" --json att 2> /dev/null | grep -q '"end": "detached"'
ok $? "mf_print --json: its end is \"detached\""
is "$attach_rc" 0 "--attach: status 0"
like "$(sed -n 1p attach.err)" "^malloc_freq: attached to process $pid: its calls from now on are recorded in $mf_work/att\$" "--attach says where it records"
is "$again_rc" 125 "attached already: refused"
like "$(cat again.err)" "^malloc_freq: process $pid \\([^)]*prog_attach\\) is profiled already" "attached already: said"
is "$detach_rc" 0 "--detach: status 0"
like "$(cat detach.err)" "^malloc_freq: detached from process $pid" "--detach says so"
like "$(cat detach.err)" "malloc_freq: report: .* $mf_work/att" "--detach names the report"
like "$(cat during.txt)" '^malloc leads to libmalloc_freq\.so$' "while attached: the program's malloc slot leads to the profiler"
like "$(grep '^malloc leads' attached.txt | tail -n 1)" '^malloc leads to libc\.so' "after detach: to libc again"
is "$after" "$before" "after detach: the program's threads only"
is "$after_ours" 0 "after detach: no thread named malloc_freq"
is "$status" 7 "attached and detached: the program's own status"
same=1; cmp -s plain.txt attached.txt || same=0
ok $((1 - same)) "the program's output, errno, environment and signals as without the profiler"
"$MF_PRINT" --collapsed att > att.txt 2> att.print; ok $? "mf_print reads the output"
"$MF_PRINT" att > att.sum 2> /dev/null
grep 'not finalized' att.sum; is "$?" 1 "after detach: every file final (none not finalized)"
is "$(calls att.txt ';site_main;malloc$')" 50 "site_main: exactly the 50 calls made while attached"
is "$(calls att.txt ';site_thread;malloc$')" 30 "site_thread, a thread older than the attach: its 30"
is "$(calls att.txt ';plugin_site;malloc$')" 40 "plugin_site, in a library opened after the attach: its 40"
is "$(grep -c 'no MALLOC_FREQ_' attached.txt)" 2 "the settings given while attaching are not left in the environment"

# with lifetimes and a control thread (snapshots by interval): the block from before is freed
# after attach, as an unknown one; the control thread ends at detach; the program's own
# MALLOC_FREQ_CACHE, which the launcher's replaces while attaching, is as it was after
# (the fewest of 5 looks: a snapshot's descriptor task, made by the control thread, bears its
# name while it lives)
attach() {
	before=$(tasks)
	"$launcher" --attach "$pid" -q --lifetimes --snapshot-interval 0.05 -o life 2> life.err
	attach_rc=$?; during=$(ours)
	for look in 1 2 3 4; do
		sleep 0.01
		n=$(ours); [ "$n" -ge "$during" ] || during=$n
	done
}
detach() { "$launcher" --detach "$pid" -q 2> detach.err; detach_rc=$?; after=$(tasks); after_ours=$(ours); }
start env MALLOC_FREQ_CACHE="$mf_work/its_own"
run life.txt attach detach
finish life.txt
is "$attach_rc/$detach_rc/$status" 0/0/7 "with lifetimes: attached, detached, and the program's own status"
is "$during" 1 "with --snapshot-interval: the control thread while attached"
is "$after/$after_ours" "$before/0" "with --snapshot-interval: no thread of the profiler's after detach"
sed 's/no MALLOC_FREQ_/MALLOC_FREQ_ in the environment/' plain.txt > plain_var.txt
cmp -s plain_var.txt life.txt; ok $? "with lifetimes: the conversation as without the profiler, its own variable kept"
"$MF_PRINT" --collapsed life > life.col 2> /dev/null
is "$(calls life.col ';site_main;malloc$')/$(calls life.col ';site_thread;malloc$')" 50/30 "with lifetimes: 50 and 30"
"$MF_PRINT" life > life.sum 2> /dev/null
# signals while gdb runs its calls in the process (an ignored one too: a traced process reports
# it to its tracer, which by default stops there and abandons the call)
attach() { "$launcher" --attach "$pid" -q -o sig 2> sig.err; attach_rc=$?; }
detach() { "$launcher" --detach "$pid" -q 2> sigd.err; detach_rc=$?; }
start env -u MALLOC_FREQ_CACHE
send ready.txt s # (its answer: SIGUSR1 is ignored from here on)
(while kill -USR1 "$pid" 2> /dev/null; do sleep 0.002; done) & pelter=$!
run sig.txt attach detach
kill "$pelter"; wait "$pelter" 2> /dev/null
finish sig.txt
is "$attach_rc/$detach_rc/$status" 0/0/7 \
	"SIGUSR1 (ignored) every 2 ms during attach and detach: both done, the program's own status"
"$MF_PRINT" --collapsed sig > sig.col 2> /dev/null
is "$(calls sig.col ';site_main;malloc$')" 50 "... and the 50 calls made while attached counted"
like "$(grep 'lifetimes:' life.sum)" '; 2 frees of blocks never seen allocated$' \
	"with lifetimes: the block from before attach freed, and one realloc'd, are 2 unknown frees"

# bash defines setenv and getenv of its own, apart from libc's environment: the settings still
# reach the library (its process directory under -o, not in bash's current directory)
if command -v bash > /dev/null; then
	rm -f bin bout; mkfifo bin bout
	bash -c 'echo ready; read -r x; y="$x$x"; echo "$y"; read -r x' < bin > bout & bpid=$!
	exec 6> bin 7< bout; read -r ready <&7
	"$launcher" --attach "$bpid" -q -o bashprof 2> err; rc=$?
	echo line >&6; read -r doubled <&7
	"$launcher" --detach "$bpid" -q 2>> err
	echo end >&6; exec 6>&- 7<&-; wait "$bpid"
	is "$rc/$doubled" 0/lineline "attached to bash: it goes on"
	[ -d "bashprof/malloc_freq.$bpid" ] && [ ! -e "malloc_freq.$bpid" ]
	ok $? "attached to bash: its profile under -o"
else
	skip "no bash"; skip "no bash"
fi

# a program linked with the API's stub library (libmalloc_freq_api) has a malloc_freq_dir of its
# own, which gdb may find before the profiler's: --detach calls the library's, through its handle
prog=$MF_TESTS/prog_attach_api
attach() { "$launcher" --attach "$pid" -o api 2> api.err; attach_rc=$?; }
detach() { "$launcher" --detach "$pid" 2> apid.err; detach_rc=$?; after_ours=$(ours); }
start env -u MALLOC_FREQ_CACHE
run api.txt attach detach
send api.txt d
finish api.txt
prog=$MF_TESTS/prog_attach
is "$attach_rc/$detach_rc/$status/$after_ours" 0/0/7/0 "linked with the API's stub: attached, detached, its own status, no thread left"
like "$(cat apid.err)" "^malloc_freq: detached from process $pid\$" "... --detach names the process (not: nothing was recorded)"
like "$(cat apid.err)" "malloc_freq: report: .* $mf_work/api" "... and the report"
"$MF_PRINT" api > api.sum 2> /dev/null
is "$(grep -c 'not finalized' api.sum)" 0 "... every file final"
"$MF_PRINT" --collapsed api > api.col 2> /dev/null
is "$(calls api.col ';site_main;malloc$')/$(calls api.col ';site_thread;malloc$')/$(calls api.col ';plugin_site;malloc$')" 50/30/40 \
	"... exactly the 50, 30 and 40 calls made while attached"
is "$(tail -n 2 api.txt | head -n 1)" "its malloc_freq_dir is NULL" "... the program's own malloc_freq_dir is the stub's still"

# a process that cannot make its profile directory: the attach says why, and undoes itself;
# --detach then says the same (as root: the process runs as nobody, and $mf_work is root's only)
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	start setpriv --reuid=65534 --regid=65534 --clear-groups env -u MALLOC_FREQ_CACHE
	: > nobody.txt; send nobody.txt a10
	"$launcher" --attach "$pid" -o "$mf_work/nobody" 2> nobody.err; rc=$?
	send nobody.txt a10; send nobody.txt g
	"$launcher" --detach "$pid" 2> nobodyd.err; drc=$?
	finish nobody.txt
	is "$rc/$status" 125/7 "a process that cannot make its directory: --attach fails, the process goes on"
	like "$(cat nobody.err)" "^malloc_freq: process $pid cannot record: it cannot make its profile directory in $mf_work/nobody: Permission denied \\(it runs as user 65534\\)" "... saying why"
	[ ! -e "$mf_work/nobody" ]; ok $? "... the output directory made for it removed"
	is "$(sed -n 3p nobody.txt)" "malloc leads to libc.so.6" "... its malloc slot led back to libc at once"
	is "$drc" 125 "... --detach then: refused"
	like "$(cat nobodyd.err)" "^malloc_freq: process $pid never recorded: it could not make its profile directory \\(Permission denied\\)" "... saying why"
else
	for i in 1 2 3 4 5 6; do skip "not root, or no setpriv: no process of another user to attach to"; done
fi

# --attach --wait: until SIGINT (sent every 0.2 s until it ends: those that come while gdb
# detaches are said to wait), then detached; or until the process ends
attached() { # waits for the launcher ($waiter) to say it is attached (gdb may take seconds)
	n=0
	until grep -q '^malloc_freq: stop: ' "$1" || ! kill -0 "$waiter" 2> /dev/null || [ $n -ge 1200 ]; do
		sleep 0.1; n=$((n + 1))
	done
}
start env -u MALLOC_FREQ_CACHE
: > wait.txt; send wait.txt a100
before=$(tasks)
"$launcher" --attach "$pid" --wait -o waitprof 2> wait.err & waiter=$!
attached wait.err
send wait.txt a50; send wait.txt t30
(while kill -INT "$waiter" 2> /dev/null; do sleep 0.2; done) & pelter=$!
wait "$waiter"; wait_rc=$?
wait "$pelter"
after=$(tasks); after_ours=$(ours)
send wait.txt a70; send wait.txt t20; send wait.txt g
finish wait.txt
is "$wait_rc/$status" 0/7 "--attach --wait, then SIGINT: status 0; the program's own status"
like "$(cat wait.err)" "^malloc_freq: stop: \\^C \\(SIGINT\\) or SIGTERM to malloc_freq \\(pid $waiter\\); or the process's end\$" "... it says how to stop it"
like "$(cat wait.err)" "^malloc_freq: detaching, please wait\$" "... a SIGINT while it detaches: said to wait"
like "$(cat wait.err)" "^malloc_freq: detached from process $pid\$" "... then detached"
like "$(cat wait.err)" "malloc_freq: report: .* $mf_work/waitprof" "... and the report named"
is "$after/$after_ours" "$before/0" "... no thread of the profiler's left"
is "$(tail -n 1 wait.txt)" "end" "... the program runs on to its end"
grep -q '^malloc leads to libc' wait.txt; ok $? "... its malloc slot led back to libc"
"$MF_PRINT" --collapsed waitprof > wait.col 2> /dev/null
is "$(calls wait.col ';site_main;malloc$')/$(calls wait.col ';site_thread;malloc$')" 50/30 "... exactly the 50 and 30 calls made while attached"
start env -u MALLOC_FREQ_CACHE
: > end.txt
"$launcher" --attach "$pid" --wait -o endprof 2> end.err & waiter=$!
attached end.err
send end.txt a50
finish end.txt
wait "$waiter"; end_rc=$?
is "$end_rc/$status" 0/7 "--attach --wait, then the process ends: status 0; the program's own"
like "$(cat end.err)" "^malloc_freq: process $pid ended\$" "... said"
like "$(cat end.err)" "malloc_freq: report: .* $mf_work/endprof" "... and the report named"
"$MF_PRINT" endprof > end.sum 2> /dev/null
grep 'not finalized' end.sum; is "$?" 1 "... every file final"
"$MF_PRINT" --collapsed endprof > end.col 2> /dev/null
is "$(calls end.col ';site_main;malloc$')" 50 "... its 50 calls"
like "$("$MF_PRINT" --processes endprof 2> /dev/null)" "\[prog_attach\] $pid, exited 7: " "... and its end, exited 7"

# --detach with SIGTERM sent to it every 0.2 s until it ends (SIGINT: ignored by a job started
# with &): gdb is not ended half way, the detach is done and the program runs on
start env -u MALLOC_FREQ_CACHE
: > term.txt
"$launcher" --attach "$pid" -q -o termprof 2> /dev/null
send term.txt a50
"$launcher" --detach "$pid" 2> term.err & waiter=$!
# (from when its gdb runs: /proc's stat of a process "(gdb)" whose parent is the launcher)
n=0
until grep -qs "^[0-9]* (gdb) . $waiter " /proc/[0-9]*/stat || ! kill -0 "$waiter" 2> /dev/null ||
	[ $n -ge 1200 ]; do
	sleep 0.05; n=$((n + 1))
done
(while kill -TERM "$waiter" 2> /dev/null; do sleep 0.2; done) & pelter=$!
wait "$waiter"; term_rc=$?
wait "$pelter"
send term.txt a70; send term.txt g
finish term.txt
is "$term_rc/$status" 0/7 "--detach, SIGTERM while gdb works: status 0; the program's own status"
like "$(cat term.err)" "^malloc_freq: detaching, please wait\$" "... said to wait"
like "$(cat term.err)" "^malloc_freq: detached from process $pid\$" "... then detached"
is "$(tail -n 2 term.txt | head -n 1)" "malloc leads to libc.so.6" "... its malloc slot led back to libc"
"$MF_PRINT" --collapsed termprof > term.col 2> /dev/null
is "$(calls term.col ';site_main;malloc$')" 50 "... exactly the 50 calls made while attached"

# more than 32 settings to give the process: refused before gdb runs, saying so (they were cut
# to 32 without a word)
start env -u MALLOC_FREQ_CACHE
send /dev/null a1
# shellcheck disable=SC2046 # (one word a variable)
env $(seq -f 'MALLOC_FREQ_UNREAD_%g=1' 1 33) "$launcher" --attach "$pid" -o many 2> err; rc=$?
finish /dev/null
is "$rc" 125 "33 MALLOC_FREQ_ settings: --attach refused"
like "$(cat err)" "^malloc_freq: more than 32 MALLOC_FREQ_\* settings to give the process" "... saying so"
[ ! -e many ]; ok $? "... the output directory made for it removed"

# refused, saying why
start env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB"
send /dev/null a1 # (its first answer: it runs, preloaded)
"$launcher" --attach "$pid" 2> err; rc=$?
is "$rc" 125 "started under the profiler: --attach refused"
like "$(cat err)" "^malloc_freq: process $pid \\(.*prog_attach\\) is profiled already" "... saying so"
"$launcher" --detach "$pid" 2> err; rc=$?
is "$rc" 125 "started under the profiler: --detach refused"
like "$(cat err)" "^malloc_freq: process $pid was started under the profiler, not attached to" "... saying so"
finish /dev/null
start env
send /dev/null a1
"$launcher" --detach "$pid" 2> err; rc=$?
is "$rc" 125 "a process not profiled: --detach refused"
like "$(cat err)" "^malloc_freq: process $pid \\(.*prog_attach\\) is not profiled$" "... saying so"
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$launcher" --attach "$pid" 2> err; rc=$?
	owner=0
elif [ "$(stat -c %u /proc/1)" != "$(id -u)" ]; then
	"$launcher" --attach 1 2> err; rc=$?
	owner=$(stat -c %u /proc/1)
else
	rc=; owner=
fi
if [ -n "$owner" ]; then
	is "$rc" 125 "another user's process: refused"
	like "$(cat err)" "^malloc_freq: process [0-9]* is user $owner's: tracing it takes that user, or CAP_SYS_PTRACE" "... saying what it takes"
else
	skip "no other user's process to try"; skip "no other user's process to try"
fi
finish /dev/null
sh -c 'exit 0' & gone=$!; wait "$gone"
"$launcher" --attach "$gone" 2> err; rc=$?
is "$rc" 125 "a process that does not exist: refused"
is "$(cat err)" "malloc_freq: no process $gone" "... saying so"
printf '#include <unistd.h>\nint main(void) { return (int)read(0, &(char){0}, 1); }\n' > static.c
if ${CC:-cc} -static -o static static.c 2> /dev/null; then
	rm -f sin; mkfifo sin; ./static < sin & spid=$!; exec 5> sin
	# (the shell's child is the shell until it has run ./static: what the launcher reads)
	for i in $(seq 200); do [ "$(readlink /proc/$spid/exe)" = "$PWD/static" ] && break; sleep 0.05; done
	"$launcher" --attach "$spid" 2> err; rc=$?
	exec 5>&-; wait "$spid"
	is "$rc" 125 "a static program: refused"
	like "$(cat err)" "^malloc_freq: process $spid \\(.*/static\\) is statically linked" "... saying so"
else
	skip "no static C library"; skip "no static C library"
fi
"$launcher" --attach 1 ./prog 2> err; is "$?" 2 "--attach with a program: a usage error"
"$launcher" --detach 1 -o x 2> err; is "$?" 2 "--detach with -o: a usage error"
"$launcher" --wait ./prog 2> err; is "$?" 2 "--wait without --attach: a usage error"
done_testing
