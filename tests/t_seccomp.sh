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
#   answer, and threads started later are recorded.
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
done_testing
