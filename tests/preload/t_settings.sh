#!/bin/sh
# Bad settings and bad places: every unusable MALLOC_FREQ_* value is named on stderr once and
# its default used; a directory that cannot be made, too few descriptors, a limited address
# space, a file size limit: the program runs on unharmed (same output, same status) and the
# profiler says once what happened. Files are never world-writable; a relative directory is
# fixed at start.
. "$srcdir/tests/tap.sh"
command -v prlimit > /dev/null || bail "no prlimit (util-linux)"
plain=$("$MF_TESTS/prog_deep" 3)
# settle DESC WANT_STDERR ENV...: runs prog_deep 3 with the settings in ENV
settle() {
	desc=$1 want=$2; shift 2
	rm -rf "$mf_work"/malloc_freq.*
	got=$(env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$@" "$MF_TESTS/prog_deep" 3 2> "$mf_work/err"); rc=$?
	is "$rc:$got:$(cat "$mf_work/err")" "0:$plain:$want" "$desc"
}
for v in abc 0 1025 "" -5 12x; do
	settle "MALLOC_FREQ_DEPTH='$v': named once, default used" \
		"malloc_freq: MALLOC_FREQ_DEPTH=\"$v\" is not a whole number from 1 to 1024; using 128" MALLOC_FREQ_DEPTH="$v"
done
for v in "" 0 1000000001 1e3; do
	settle "MALLOC_FREQ_SAMPLE='$v': named once, every call recorded" \
		"malloc_freq: MALLOC_FREQ_SAMPLE=\"$v\" is not a whole number from 1 to 1000000000; recording every call" MALLOC_FREQ_SAMPLE="$v"
done
settle "MALLOC_FREQ_SEED='x': named once" \
	'malloc_freq: MALLOC_FREQ_SEED="x" is not a whole number; sampling is seeded from the clock' MALLOC_FREQ_SEED=x
for v in "" fast CACHED; do
	settle "MALLOC_FREQ_UNWIND='$v': named once, cached used" \
		"malloc_freq: MALLOC_FREQ_UNWIND=\"$v\" is not one of cached, libunwind, check; using cached" MALLOC_FREQ_UNWIND="$v"
done
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
is "$(calls "$mf_work/c.txt" ';site_leaf;malloc$')" 3000 "with bad values the default settings record every call"

# stderr that is not what it was at start gets no message: a dead pipe (the program, which
# never writes there, is not ended by SIGPIPE), and a file the program opened at descriptor 2
# after closing it (its data stays its own)
if command -v python3 > /dev/null 2>&1; then
	got=$(python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stderr=w, stdout=subprocess.PIPE)
print(p.returncode, p.stdout.decode().strip().replace("\n", " "))' \
		env MALLOC_FREQ_DIR="$mf_work/does/not/exist" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_deep" 3)
	is "$got" "0 $(echo $plain)" "stderr a pipe no one reads: the program ends as it would, not by SIGPIPE"
else
	skip "stderr a pipe no one reads: no python3 to make one"
fi
want=$("$MF_TESTS/prog_stderr" "$mf_work/data")
got=$(MALLOC_FREQ_DIR="$mf_work/does/not/exist" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_stderr" "$mf_work/data"); rc=$?
is "$rc:$got:$(cat "$mf_work/data" | tr '\n' ' ')" "0:$want:DATA MORE " \
	"a file the program opened at descriptor 2 after closing stderr holds only its own data"

# a depth limit cuts stacks and says so, counts stay exact
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_DEPTH=4 profile "$MF_TESTS/prog_deep" 10 > /dev/null
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
# (each stack cut to 4 frames and marked; but main's own call is whole in 4 frames where main is
# the third from _start, as with glibc before 2.34)
cut=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";") }
	f[1] == "[truncated stack]" && k == 6 { s += n } END { print s + 0 }' "$mf_work/c.txt")
whole=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";") }
	f[1] == "_start" && k <= 5 { s += n } END { print s + 0 }' "$mf_work/c.txt")
is "$((cut + whole)):$(calls "$mf_work/c.txt" ';site_leaf;malloc$'):$((whole <= 1))" "10000:10000:1" \
	"MALLOC_FREQ_DEPTH=4: all 10000 stacks cut to 4 frames and marked truncated ($whole whole), counted exactly"

# places that cannot be used
for place in "$mf_work/does/not/exist" /etc/passwd; do
	got=$(MALLOC_FREQ_DIR="$place" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_deep" 3 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "0:$plain" "MALLOC_FREQ_DIR=$place: the program runs on unharmed"
	like "$(cat "$mf_work/err")" "^malloc_freq: cannot create a profile directory in $place: .*; not recording$" "... and it is said"
	is "$(wc -l < "$mf_work/err")" 1 "... once"
	# (a refused call takes no slow step: they cost two system calls each)
	# (strace's own exec must show in the trace: a strace that cannot trace here writes none)
	if command -v strace > /dev/null; then
		strace -f -qq -E MALLOC_FREQ_DIR="$place" -E LD_PRELOAD="$MF_LIB" \
			-e trace=rt_sigprocmask,execve -e signal=none -o "$mf_work/trace" \
			"$MF_TESTS/prog_deep" 3 > /dev/null 2>&1
		src=$? n=$(grep -c rt_sigprocmask "$mf_work/trace")
		[ $src = 0 ] && grep -q execve "$mf_work/trace" && [ "$n" -lt 100 ]
		ok $? "... and its 3000 calls cost no system call each ($n rt_sigprocmask; strace $src)"
	else
		skip "strace not installed: the calls' system calls not counted"
	fi
done
rm -rf "$mf_work"/malloc_freq.*
got=$(cd "$mf_work" && MALLOC_FREQ_DIR= LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_deep" 3 2> "$mf_work/err")
is "$(cat "$mf_work/err")" "malloc_freq: MALLOC_FREQ_DIR is empty; using the current directory" "an empty MALLOC_FREQ_DIR is named"
ls -d "$mf_work"/malloc_freq.* > /dev/null 2>&1; ok $? "... and the current directory used"

# too few descriptors: a program that used them all up starts threads (the profiler opens its
# files in a copy of the table, where it makes room)
# (under qemu-user no task has a table of its own: qemu refuses PR_GET_SECCOMP, and a clone
# without CLONE_FILES, so the files are opened in the program's full table)
if native "descriptors used up: the profiler's files in a table of their own"; then
	rm -rf "$mf_work"/malloc_freq.*
	got=$(MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_threads" nofds 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "0:" "descriptors used up: the program runs on unharmed"
	is "$(cat "$mf_work/err")" "" "... nothing said"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
	is "$(calls "$mf_work/c.txt" ';site_short;')" 40 "... and its 4 threads' 40 calls recorded"
fi

# a limited address space (RLIMIT_AS 1.5 GiB): a thread file reserves a 256th of it, and gives
# back what it did not fill when its thread ends, so after 400 threads came and went the
# program still gets its block of 900 MiB, with lifetimes too (whose files reserved 1 GiB
# each, and kept all of it, for a late free)
# (qemu-user needs more address space than these limits leave: its code buffer alone takes
# 128 MiB; and prlimit, the machine's own, cannot take another processor's library)
if native "RLIMIT_AS of 1.5 GiB, 128 MiB and 48 MiB"; then
	want=$(prlimit --as=1610612736 "$MF_TESTS/prog_aslimit" 900 100)
	for life in 0 1; do
		rm -rf "$mf_work"/malloc_freq.*
		got=$(MALLOC_FREQ_LIFETIMES=$life MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" \
			prlimit --as=1610612736 "$MF_TESTS/prog_aslimit" 900 100 2> "$mf_work/err"); rc=$?
		is "$want:$rc:$got:$(cat "$mf_work/err")" "block ok:0:block ok:" "RLIMIT_AS, MALLOC_FREQ_LIFETIMES=$life, 400 threads: the program gets its 900 MiB as without the profiler, nothing said"
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
		is "$(calls "$mf_work/c.txt" ';site_small;malloc$')" 40000 "... and its threads' 40,000 calls recorded"
	done
	# a small limit (RLIMIT_AS 128 MiB): the profiler's address space is about a MiB per live thread
	# and a 256th of the limit per thread file, so after 4 threads the program still gets a block
	# within 16 MiB of the largest it gets without the profiler. (glibc gives each new thread an
	# arena of 64 MiB where one fits and the kernel happens to place it 64 MiB-aligned, else none:
	# in about 1 run in 30, plain or profiled, which then cannot have its block. Both runs keep to
	# the one arena, so that what is measured is the profiler's address space, not that chance.)
	largest=0
	for n in $(seq 128 -1 32); do
		[ "$(MALLOC_ARENA_MAX=1 prlimit --as=134217728 "$MF_TESTS/prog_aslimit" "$n" 1)" = "block ok" ] && { largest=$n; break; }
	done
	rm -rf "$mf_work"/malloc_freq.*
	got=$(MALLOC_ARENA_MAX=1 MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" \
		prlimit --as=134217728 "$MF_TESTS/prog_aslimit" $((largest - 16)) 1 2> "$mf_work/err"); rc=$?
	is "$rc:$got:$(cat "$mf_work/err")" "0:block ok:" "RLIMIT_AS 128 MiB, 4 threads: the program gets $((largest - 16)) MiB (without the profiler at most $largest)"

	# lifetimes take address space as blocks come, nothing at start: a program that takes blocks of
	# 64 KiB until one is refused (48 MiB: about 690) gets as many with lifetimes, sampled or not,
	# as profiled without, but for the map: 64 to 128 bytes a live block, its first tables (512
	# bytes for each of 64 shards) and a page of file numbers, in pages part filled at most three:
	# at most (128 N + 48 KiB) / 64 KiB blocks fewer, rounded up (under 256 MiB no filter of 1 MiB
	# is made for sampling). (Every run a first run of the rule cache: both load libunwind.)
	MALLOC_FREQ_CACHE=off
	prof=$(MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" prlimit --as=50331648 "$MF_TESTS/prog_aslimit" blocks)
	for env in MALLOC_FREQ_LIFETIMES=1 "MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_SAMPLE=10"; do
		rm -rf "$mf_work"/malloc_freq.*
		life=$(env $env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" prlimit --as=50331648 "$MF_TESTS/prog_aslimit" blocks)
		bound=$(((${prof:-0} * 128 + 49152 + 65535) / 65536))
		[ -n "$prof" ] && [ -n "$life" ] && [ $((prof - life)) -le $bound ]
		ok $? "RLIMIT_AS 48 MiB, $env: $life blocks of 64 KiB, profiled without lifetimes $prof (at most $bound fewer)"
	done
	MALLOC_FREQ_CACHE="$mf_work/cache"
fi

# ... and a file that fills what it reserved says so, and why
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" prlimit --as=1073741824 \
	"$MF_TESTS/prog_deep" 100 > /dev/null 2> "$mf_work/err"
like "$(cat "$mf_work/err")" "^malloc_freq: .* reached 4194304 bytes, as much as a thread's file may hold with MALLOC_FREQ_LIFETIMES=1 under this RLIMIT_AS; .*said once" \
	"RLIMIT_AS 1 GiB, lifetimes, 100,000 stacks: the file filled its 4 MiB, and it is said"

# a file size limit below what the profile needs: no SIGXFSZ, new stacks counted as lost
rm -rf "$mf_work"/malloc_freq.*
want=$("$MF_TESTS/prog_deep" 10)
got=$(prlimit --fsize=131072 env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_deep" 10 \
	2> "$mf_work/err"); rc=$? # (the library for the program only, not for prlimit)
is "$rc:$got" "0:$want" "RLIMIT_FSIZE=128 KiB: the program runs on unharmed (no SIGXFSZ)"
like "$(cat "$mf_work/err")" "^malloc_freq: cannot grow .*: File too large; .*said once" "... the profiler says it could not grow"
is "$(wc -l < "$mf_work/err")" 1 "... once"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
all=$(calls "$mf_work/c.txt" '.')
summary=$("$MF_PRINT" "$mf_work"/malloc_freq.*)
lost=$(printf '%s\n' "$summary" | sed -n 's/^  \([0-9]*\) of \([0-9]*\) calls lost.*/\1/p')
seen=$(printf '%s\n' "$summary" | sed -n 's/^  \([0-9]*\) of \([0-9]*\) calls lost.*/\2/p')
is "$((all + ${lost:-0}))" "${seen:-none}" "every call is recorded ($all) or counted as lost (${lost:-0}) of $seen"
[ "$(calls "$mf_work/c.txt" ';site_leaf;malloc$')" -lt 10000 ] && [ "${lost:-0}" -gt 0 ]; ok $? "... and some were lost"

# a full disk (a 96 KiB tmpfs, where mounting is allowed): the same as the size limit
mkdir -p "$mf_work/full"
if mount -t tmpfs -o size=96k tmpfs "$mf_work/full" 2>/dev/null; then
	got=$(MALLOC_FREQ_DIR="$mf_work/full" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_deep" 10 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "0:$want" "a full disk: the program runs on unharmed"
	like "$(cat "$mf_work/err")" "No space left on device" "... the profiler says the disk is full"
	"$MF_PRINT" --collapsed "$mf_work/full" > "$mf_work/c.txt" 2>/dev/null
	all=$(calls "$mf_work/c.txt" '.')
	summary=$("$MF_PRINT" "$mf_work/full" 2>/dev/null)
	lost=$(printf '%s\n' "$summary" | sed -n 's/^  \([0-9]*\) of \([0-9]*\) calls lost.*/\1/p')
	seen=$(printf '%s\n' "$summary" | sed -n 's/^  \([0-9]*\) of \([0-9]*\) calls lost.*/\2/p')
	is "$((all + ${lost:-0}))" "${seen:-none}" "... what was recorded ($all) and what was lost (${lost:-0}) add up to every call"
	umount "$mf_work/full"
else
	echo "# cannot mount a small tmpfs here: the full-disk case is covered by the size limit above"
fi

# permissions and a relative directory fixed at start
rm -rf "$mf_work"/malloc_freq.* "$mf_work/rel"
mkdir "$mf_work/rel"
(cd "$mf_work" && umask 000 && MALLOC_FREQ_DIR=rel LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_deep" 2 chdir > /dev/null)
set -- "$mf_work"/rel/malloc_freq.*
[ -d "$1" ]; ok $? "a relative MALLOC_FREQ_DIR is resolved at start (the program then chdir'd to /)"
ww=$(find "$mf_work/rel" -perm -o+w | wc -l)
is "$ww" 0 "with umask 000, nothing the profiler made is world-writable"
done_testing
