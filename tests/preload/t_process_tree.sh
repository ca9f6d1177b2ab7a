#!/bin/sh
# A process tree: a profiled shell script runs two programs of known counts (prog_tree and the
# same binary as other_prog), a fork + _exit child, an exec chain and a process killed by a
# signal. Each process is one unit: its own exact count, its program, how it ended (written
# by itself, by its new image, or by the shell's wait), picked alone by --process (pid or
# name), and each stack rooted under its program unless --merge-processes. A process still
# running is told apart from one that ended without a word.
. "$srcdir/tests/tap.sh"
prog=$MF_TESTS/prog_tree
ln -s "$prog" "$mf_work/other_prog"
# (the tree's root is the machine's own sh, which cannot take another processor's library)
if native "a profiled shell's process tree"; then
	cat > "$mf_work/script.sh" <<SH
"$prog" alloc 100 0
"$mf_work/other_prog" alloc 200 3
"$prog" forkexit 300 40
"$prog" exec 50 60
"$prog" kill 70
exit 0
SH
	profile sh "$mf_work/script.sh" 2> /dev/null; rc=$?
	is "$rc" 0 "the script runs under the profiler and exits 0"
	set -- "$mf_work"/malloc_freq.*
	is "$#" 8 "eight process images: the shell, five programs, a forked child, an exec'd image"
	"$MF_PRINT" --processes "$mf_work" > "$mf_work/procs" 2> /dev/null; ok $? "--processes reads them"
	sed 's/^/# /' "$mf_work/procs"
	# line CMDLINE-REGEX: the --processes line of the process whose command line matches
	line() { grep -E -- "$1\$" "$mf_work/procs"; }
	pid_of() { line "$1" | sed -E 's/.*\] ([0-9]+), .*/\1/' | head -1; }
	like "$(line ': sh .*script.sh')" "\[sh\] [0-9]+, (exited 0|_exit\(0\)): " "the shell: exited 0"
	like "$(line 'prog_tree alloc 100 0')" "^ +[0-9]+ .* [|\`]- \[prog_tree\] [0-9]+, exited 0: " "prog_tree alloc: under the shell, exited 0"
	like "$(line 'other_prog alloc 200 3')" "\[other_prog\] [0-9]+, exited 3: " "other_prog: its own program, exited 3"
	like "$(line 'prog_tree forkexit 300 40' | head -1)" "\[prog_tree\] [0-9]+, exited 0: " "forkexit: the parent exited 0"
	like "$(line 'prog_tree forkexit 300 40' | sed -n 2p)" "\`- \[prog_tree\] [0-9]+, _exit\(7\): " "forkexit: the child, under it, called _exit(7)"
	like "$(line 'prog_tree exec 50 60')" "\[prog_tree\] [0-9]+, exec'd: " "exec: the first image was replaced"
	like "$(line 'prog_tree alloc 60 0')" "\`- exec \[prog_tree\] [0-9]+, exited 0: " "exec: the new image, under the one it replaced, exited 0"
	like "$(line 'prog_tree kill 70')" "\[prog_tree\] [0-9]+, killed by SIGKILL: " "kill: killed by SIGKILL (the shell's wait said so)"
	[ "$(pid_of 'prog_tree exec 50 60')" = "$(pid_of 'prog_tree alloc 60 0')" ]; ok $? "exec: both images have one pid"
	# count WANT PICK...: site_tree's calls with --process PICK
	count() {
		want=$1; shift
		"$MF_PRINT" --collapsed "$@" "$mf_work" > "$mf_work/c.txt" 2> /dev/null
		calls "$mf_work/c.txt" ';site_tree;malloc$'
	}
	# (the two images of the exec chain are one process: its pid picks both)
	for spec in 'prog_tree alloc 100 0:100' 'other_prog alloc 200 3:200' 'prog_tree exec 50 60:110' \
		'prog_tree kill 70:70'; do
		cmd=${spec%:*} want=${spec##*:}
		pid=$(pid_of "$cmd")
		is "$(count "$want" --process "$pid")" "$want" "--process $pid ($cmd): exactly its $want calls"
	done
	fe=$(line 'prog_tree forkexit 300 40' | sed -E 's/.*\] ([0-9]+), .*/\1/' | tr '\n' ' ')
	set -- $fe
	is "$(count 300 --process "$1"):$(count 40 --process "$2")" "300:40" "--process: the forkexit parent's 300 calls, its child's 40"
	is "$(count 200 --process other_prog)" 200 "--process other_prog: its 200 calls"
	# the summary counts the directories of the processes chosen (it counted every one read)
	like "$("$MF_PRINT" --process other_prog "$mf_work" 2> /dev/null | sed -n 1p)" \
		"^malloc_freq: 200 calls, .*; 1 thread in 1 file from 1 directory$" "--process other_prog: the summary counts its one directory"
	is "$(count 620 --process prog_tree)" 620 "--process prog_tree: its six processes' 620 calls"
	is "$(count 820 --process prog_tree --process other_prog)" 820 "--process twice: both programs"
	# --thread: the one process whose thread it is (its main thread's id is its pid)
	pid=$(pid_of 'other_prog alloc 200 3')
	"$MF_PRINT" --processes --thread "$pid" "$mf_work" > "$mf_work/t.txt" 2> /dev/null
	is "$(grep -cE '\] [0-9]+, ' "$mf_work/t.txt"):$(grep -c "\] $pid, exited 3: " "$mf_work/t.txt")" 1:1 "--processes --thread $pid: only other_prog's line"
	if command -v python3 > /dev/null 2>&1; then
		"$MF_PRINT" --json --thread "$pid" "$mf_work" 2> /dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["processes"]), d["processes"][0]["pid"], d["processes"][0]["total"]["calls"] >= 200, d["summary"]["processes"])' > "$mf_work/j.txt"
		is "$(cat "$mf_work/j.txt")" "1 $pid True 1" "--json --thread $pid: one process, its own, with its calls"
	else
		skip "--json --thread: no python3 to parse it"
	fi
	"$MF_PRINT" --collapsed "$mf_work" > "$mf_work/c.txt" 2> /dev/null
	is "$(grep -vc '^\[\(sh\|prog_tree\|other_prog\)\];' "$mf_work/c.txt")" 0 "--collapsed: every stack under its program"
	is "$(calls "$mf_work/c.txt" '^\[other_prog\];.*;site_tree;malloc$')" 200 "--collapsed: [other_prog] roots its 200 calls"
	"$MF_PRINT" --collapsed --merge-processes "$mf_work" > "$mf_work/c.txt" 2> /dev/null
	is "$(grep -c '^\[' "$mf_work/c.txt")" 0 "--merge-processes: no program roots"
	is "$(calls "$mf_work/c.txt" ';site_tree;malloc$')" 820 "--merge-processes: all 820 calls"
	"$MF_PRINT" "$mf_work" > "$mf_work/report" 2> /dev/null
	like "$(cat "$mf_work/report")" "^ +[0-9]+ +[0-9.]+% +[0-9.]+ [KM]?i?B +6 +6 +6  prog_tree: 6 processes: " "programs: prog_tree, 6 processes, threads and files"
	like "$(cat "$mf_work/report")" "  other_prog: pid [0-9]+, exited 3$" "programs: other_prog, its pid and end"
	like "$(cat "$mf_work/report")" "1 file not finalized, of process [0-9]+ \(prog_tree, killed by SIGKILL\): " "the summary names the killed process and its signal, and no other"
	if grep -q "ended without\|still running" "$mf_work/report"; then fail "no process reads as ended unrecorded or running"; else pass "no process reads as ended unrecorded or running"; fi
	"$MF_PRINT" --threads "$mf_work" > "$mf_work/threads" 2> /dev/null
	like "$(grep '^ *total ' "$mf_work/threads")" " $(pid_of 'prog_tree forkexit 300 40')/$(pid_of 'prog_tree forkexit 300 40') .*pid/tid$" "--threads: columns named pid/tid"
fi

# A process still running, then killed with no profiled parent to see it.
rm -rf "$mf_work"/malloc_freq.*
env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$prog" wait 80 > "$mf_work/out" &
pid=$!
i=0
while ! grep -q ready "$mf_work/out" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
"$MF_PRINT" "$mf_work" > "$mf_work/report" 2> /dev/null
like "$(cat "$mf_work/report")" "1 file not finalized, of process $pid \(prog_tree\): still running" "alive: still running"
kill -9 $pid; wait $pid 2> /dev/null
"$MF_PRINT" "$mf_work" > "$mf_work/report" 2> /dev/null
like "$(cat "$mf_work/report")" "1 file not finalized, of process $pid \(prog_tree\): ended without saying how" "killed, no profiled parent: ended without saying how"
rm "$mf_work"/malloc_freq.*/process
"$MF_PRINT" --collapsed "$mf_work" > "$mf_work/c.txt" 2> /dev/null
is "$(calls "$mf_work/c.txt" ';site_tree;malloc$')" 80 "without a process record (format 2): read as before"

# An exec into a program that makes no record (here one that allocates nothing; a static or
# setuid one alike): the shell's wait saw its pid exit 8, and that status was written as the
# old image's own exit. And a grandchild whose first allocation comes after its parent has
# ended named init as its parent (read at that allocation), and stood apart from the tree.
tree="$mf_work/tree2"
mkdir "$tree"
MALLOC_FREQ_DIR="$tree" LD_PRELOAD="$MF_LIB" sh -c "'$prog' execstatus 20 8; '$prog' orphan 10 30; true"
"$MF_PRINT" --processes "$tree" > "$mf_work/procs2" 2> /dev/null
sed 's/^/# /' "$mf_work/procs2"
# (the status is the shell's wait's: the machine's own shell, not profiled where the library is
# another processor's)
if native "an exec into a program with no record: its pid's status, which the shell's wait says"; then
	like "$(grep 'execstatus 20 8$' "$mf_work/procs2")" "\[prog_tree\] [0-9]+, ended unrecorded \(then its pid exited 8\): " \
		"an exec into a program with no record: ended unrecorded, then its pid exited 8"
fi
"$MF_PRINT" --json "$tree" 2> /dev/null > "$mf_work/tree2.json"
# json PYTHON-EXPRESSION: its value, with ps the --json's processes and levels(tail): the calls
# of the processes whose command lines end so, level by level down the tree (skipped without
# python3)
json() {
	if py=$(command -v python3); then
		"$py" -c "import json, sys
ps = json.load(open(sys.argv[1]))['processes']
def levels(tail):
    o = [p for p in ps if p['cmdline'].endswith(tail)]
    level, out = [p for p in o if p['ppid'] not in {q['pid'] for q in o}], []
    while level:
        out.append(sorted(p['total']['calls'] for p in level))
        level = [k for p in level for k in o if k['ppid'] == p['pid']]
    return out
print($1)" "$mf_work/tree2.json"
	else
		echo "python3 is not installed"
	fi
}
if command -v python3 > /dev/null; then
	if native "--json: that end, and the status (the shell's wait's)"; then
		got=$(json '[(p["end"], p["status"]) for p in ps if p["cmdline"].endswith("execstatus 20 8")]')
		is "$got" "[('unrecorded', 8)]" "--json: that end, and the status"
	fi
	is "$(json 'levels("orphan 10 30")')" "[[10], [30], [30]]" \
		"the orphaned grandchild is under its parent: 10, 30 and 30 calls down the tree"
else
	skip "--json: that end, and the status: python3 is not installed (it reads the JSON)"
	skip "the orphaned grandchild under its parent: python3 is not installed (it reads the JSON)"
fi
# A parent that forks before its first allocation: its child's record is made first (a
# record's time is its first allocation's), and the child stood apart as a second top-level
# process.
tree="$mf_work/tree3"
mkdir "$tree"
MALLOC_FREQ_DIR="$tree" LD_PRELOAD="$MF_LIB" "$prog" forkfirst 30 20; rc=$?
is "$rc" 0 "forkfirst: the parent forks before its first call, both allocate, exit 0"
"$MF_PRINT" --processes "$tree" > "$mf_work/procs3" 2> /dev/null
sed 's/^/# /' "$mf_work/procs3"
# each process line as "CALLS MARK": the mark is "`-" for a child, "" for a top-level one
# (the bytes take two fields)
rows=$(grep -E '\] [0-9]+, ' "$mf_work/procs3" | awk '{ print $1, ($6 == "`-" ? "`-" : "") }' | tr '\n' ';')
is "$rows" '30 ;20 `-;' "--processes: the child (20 calls) under its parent (30 calls), not beside it"
# The same in an image started by exec: the child is under the new image, not the one it
# replaced (whose record is earlier than the child's too).
tree="$mf_work/tree4"
mkdir "$tree"
MALLOC_FREQ_DIR="$tree" LD_PRELOAD="$MF_LIB" "$prog" execfork 10 30 20; rc=$?
"$MF_PRINT" --processes "$tree" > "$mf_work/procs4" 2> /dev/null
sed 's/^/# /' "$mf_work/procs4"
rows=$(grep -E '\] [0-9]+, ' "$mf_work/procs4" | sed -E 's/^ *([0-9]+) +[0-9.]+% +[0-9.]+ [KMG]?i?B +[0-9]+  (.*)\[prog_tree\].*/\1 \2/' | tr '\n' ';')
is "$rc:$rows" '0:10 ;30 `- exec ;20    `- ;' "exec, then a fork before the new image's first call: the child under the new image"
done_testing
