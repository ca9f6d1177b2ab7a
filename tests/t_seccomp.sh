#!/bin/sh
# A program that confines itself with a seccomp filter while it runs:
# - one that kills on the file system calls (open, mkdir, fallocate, rename): installed with
#   prctl or with syscall(SYS_seccomp), the profiler makes none of them from then on (the
#   program is not killed by SIGSYS), and what it recorded before is kept;
# - one that answers process_vm_readv with EPERM: stacks are still taken, none is recorded
#   bare without a word;
# - one that answers the file system calls with EPERM: threads that cannot get a file are
#   still in mf_print's totals.
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
done_testing
