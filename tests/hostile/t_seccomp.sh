#!/bin/sh
# A program that confines itself with a seccomp filter while it runs:
# - one that kills on the file system calls (open, mkdir, fallocate, rename): installed with
#   prctl or with syscall(SYS_seccomp), the profiler makes none of them from then on (the
#   program is not killed by SIGSYS), and what it recorded before is kept;
# - one that answers process_vm_readv with EPERM: stacks are still taken, none is recorded
#   bare without a word;
# - one that answers the file system calls with EPERM: threads that cannot get a file are
#   still in mf_print's totals;
# - one the kernel refuses (a pointer it cannot read: EFAULT, not a SIGSEGV in the profiler;
#   a bad filter: EINVAL; no NO_NEW_PRIVS as a user: EACCES): the program gets the plain run's
#   answer, and threads started later are recorded;
# or in seccomp strict mode (no system call but read, write, exit, sigreturn), the main thread
# or a second one, with every entry point, a signal handler's calls, lifetimes and sampling:
# the program runs on as without the profiler (not killed by SIGKILL at a system call of
# ours); the calls made before are recorded, those after counted as not recorded (the
# summary's "N of M calls ... were not recorded"); the files are final where the thread ends by
# exit(2) or by returning.
. "$srcdir/tests/tap.sh"
grep -q '^Seccomp:' /proc/self/status || skip_all "no seccomp in this kernel"
prog="$MF_TESTS/prog_seccomp"
within 20 "$prog" kill > /dev/null; prc=$?
[ $prc = 5 ] || skip_all "the program cannot install its filter here (status $prc)"
for mode in kill killsys; do
	want=$(within 20 "$prog" $mode)
	rm -rf "$mf_work"/malloc_freq.*
	got=$(profile_within 20 "$prog" $mode 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "5:$want" "a filter that kills on file system calls ($mode): exits 5 as without the profiler, not by SIGSYS"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';main;site_main;malloc$')" 100 "... the 100 calls made before the filter are recorded"
done

for cache in fresh off; do
	rm -rf "$mf_work"/malloc_freq.* "$MALLOC_FREQ_CACHE"
	[ $cache = off ] && export MALLOC_FREQ_CACHE=off
	got=$(profile_within 20 "$prog" vmreadv); rc=$?
	is "$rc:$got" "0:vmreadv: 1000 calls" "process_vm_readv answered with EPERM, rule cache $cache: exits 0"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';vm_worker;(prog_rec;)*site_vm;malloc$')" 1000 "... the thread's 1000 calls keep their stacks"
done
MALLOC_FREQ_CACHE="$mf_work/cache"

rm -rf "$mf_work"/malloc_freq.*
got=$(profile_within 20 "$prog" eperm 2> "$mf_work/err"); rc=$?
is "$rc:$got" "0:eperm: 8 threads done" "file system calls answered with EPERM, then 8 threads allocate: exits 0"
n=$(accounted "$mf_work"/malloc_freq.*)
[ "$n" -ge 64100 ]; ok $? "... mf_print accounts for all of the 64100 calls made ($n)"

# unrecorded FILE: the calls that mf_print's summary, in FILE, says were not recorded (0: no
# such line)
unrecorded() {
	awk '/^  [0-9]+ of [0-9]+ calls .* were not recorded/ { n = $1 } END { print n + 0 }' "$1"
}

# A filter the kernel refuses: the plain run's answers (each printed), then 4 threads of 1000
# calls, recorded. eacces as a user (nobody, with setpriv, when this runs as root).
for mode in badptr einval eacces; do
	run=
	if [ $mode = eacces ] && [ "$(id -u)" = 0 ]; then
		command -v setpriv > /dev/null || { skip "eacces: no setpriv to run as a user"; continue; }
		run="setpriv --reuid=65534 --regid=65534 --clear-groups"
	fi
	want=$(within 20 $run "$prog" $mode)
	case $want in
	*"-1 E"*) ;;
	*) skip "$mode: the kernel does not refuse the filter here ($want)"; continue ;;
	esac
	mkdir "$mf_work/user" # (the profile's, owned by whoever runs the program)
	[ -n "$run" ] && chmod 711 "$mf_work" && chown 65534:65534 "$mf_work/user"
	got=$(within 20 $run env MALLOC_FREQ_DIR="$mf_work/user" MALLOC_FREQ_CACHE=off \
		LD_PRELOAD="$MF_LIB" "$prog" $mode 2> "$mf_work/err"); rc=$?
	is "$rc:$got" "0:$want" "a filter the kernel refuses ($mode): the plain run's answers, exits 0"
	d=$(ls -d "$mf_work"/user/malloc_freq.*)
	"$MF_PRINT" --collapsed $d > "$mf_work/c.txt" 2> /dev/null
	"$MF_PRINT" $d > "$mf_work/r.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';worker;site_thread;malloc$')" 4000 "... the 4 threads started after it are recorded (4000 calls)"
	is "$(unrecorded "$mf_work/r.txt")" 0 "... no call counted as not recorded"
	rm -rf "$mf_work/user"
done

# Seccomp strict mode: in the main thread (prctl, syscall), then exit(2) or exit(); in a second
# thread that returns. 91 calls there (prog_seccomp.c: STRICT_CALLS), more in the second thread
# (it says how many on stderr). Every call recorded, with lifetimes, sampled.
for mode in strict strictsys strictexit strictthread; do
	want=$(within 60 "$prog" $mode 2> /dev/null); wrc=$?
	hows="every lifetimes sampled"
	[ $mode = strictsys ] && hows=every
	[ $mode = strictexit ] && hows="every lifetimes"
	for how in $hows; do
		rm -rf "$mf_work"/malloc_freq.*
		case $how in
		every) got=$(profile_within 60 "$prog" $mode 2> "$mf_work/err"); rc=$? ;;
		lifetimes) got=$(MALLOC_FREQ_LIFETIMES=1 profile_within 60 "$prog" $mode 2> "$mf_work/err"); rc=$? ;;
		sampled) got=$(MALLOC_FREQ_SAMPLE=7 MALLOC_FREQ_SEED=3 profile_within 60 "$prog" $mode 2> "$mf_work/err"); rc=$? ;;
		esac
		is "$rc:$got" "$wrc:$want" "strict mode ($mode, $how): exits $wrc with the plain run's output, not killed by the profiler"
		d=$(ls -d "$mf_work"/malloc_freq.*) || { fail "... no profile directory"; continue; }
		n=91
		[ $mode = strictthread ] && n=$(sed -n 's/^prog_seccomp: \([0-9]*\) calls in strict mode$/\1/p' "$mf_work/err")
		"$MF_PRINT" --collapsed $d > "$mf_work/c.txt" 2> /dev/null
		"$MF_PRINT" --processes $d > "$mf_work/p.txt" 2> /dev/null # (the summary first)
		is "$(unrecorded "$mf_work/p.txt")" "$n" "... the ${n:-?} calls made in strict mode are counted as not recorded"
		if [ $how != sampled ]; then
			main=100 thread=0
			[ $mode = strictthread ] && main=200 thread=100
			is "$(calls "$mf_work/c.txt" ';main;(strict_in_thread;)?site_main;malloc$'):$(calls "$mf_work/c.txt" ';strict_thread;site_thread;malloc$'):$(calls "$mf_work/c.txt" ';site_keep;malloc$')" \
				"$main:$thread:50" "... the calls made before (and by the other thread) are recorded exactly"
		fi
		case $mode in
		strict | strictsys)
			grep -Eq "^ .* [0-9]+, _exit\(0\): .*prog_seccomp $mode\$" "$mf_work/p.txt"
			ok $? "... the process record says how it ended: _exit(0)" ;;
		strictexit)
			grep -Eq "ended without saying how" "$mf_work/p.txt"
			ok $? "... exit() ends at exit_group, which the kernel answers with SIGKILL: the record says nothing more" ;;
		strictthread)
			"$MF_PRINT" --json $d 2> /dev/null | grep -q '"name": "confined", .*"complete": true'
			ok $? "... the thread that returned in strict mode has its file finalized, with its name" ;;
		esac
		if [ $mode != strictexit ]; then
			! grep -q "not finalized" "$mf_work/p.txt"
			ok $? "... every file is finalized"
		fi
		if [ $how = lifetimes ]; then
			"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/l.txt" 2> /dev/null
			is "$(calls "$mf_work/l.txt" ';site_keep;malloc$')" 0 "... the 50 blocks recorded before and freed in strict mode are freed, not leaked"
		fi
	done
done
done_testing
