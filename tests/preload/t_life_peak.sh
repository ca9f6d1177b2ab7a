#!/bin/sh
# The process's peak of live bytes (DHAT's t-gmax) to the byte in a program with one thread,
# whose changes around it are far smaller than the profiler's batch (tests/progs/prog_peak.c): what
# each stack held then, the peak's bytes and blocks; at exit, and in the files of a process
# killed after it (a reader completes their peak figures: malloc_freq_format.h, struct
# mf_life), also when a snapshot taken before the peak is subtracted (--since: the peak
# figures are of a moment, the whole run's, not the window's).
. "$srcdir/tests/tap.sh"
for how in exit kill snap-kill; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_LIFETIMES=1 profile "$MF_TESTS/prog_peak" $([ $how = exit ] || echo $how)
	rc=$?
	is "$rc" $([ $how = exit ] && echo 0 || echo 137) "$how: prog_peak ends as it should"
	d=$(ls -d "$mf_work"/malloc_freq.*)
	if [ $how = snap-kill ]; then
		ls -d $d/snap.1.before > /dev/null; ok $? "$how: its snapshot before the peak"
		d="--since 1 $d"
	fi
	"$MF_PRINT" --collapsed --weight peak-blocks $d > "$mf_work/blocks"; ok $? "$how: --weight peak-blocks"
	"$MF_PRINT" --collapsed --weight peak $d > "$mf_work/bytes"; ok $? "$how: --weight peak"
	for s in "site_a 1000 100" "site_b 1000 50" "site_c 0 40" "site_d 1001 52" "site_e 0 4"; do
		set -- $s
		is "$(calls "$mf_work/blocks" ";$1;[a-z_]*\$") $(calls "$mf_work/bytes" ";$1;[a-z_]*\$")" \
			"$2 $(($2 * $3))" "$how: $1 held $2 blocks at the peak"
	done
	like "$("$MF_PRINT" $d)" "^  peak: 197\.3 KiB live in 3001 blocks" \
		"$how: the summary's peak: 202,052 bytes in 3001 blocks"
	is "$(awk '{ s += $NF } END { print s }' "$mf_work/bytes")" 202052 \
		"$how: the stacks' bytes at the peak add up to it, to the byte"
done

# A fork while the forking thread has live bytes pending (tests/progs/prog_life_fork.c): the child
# starts from a live sum of 0 without them, and its peak is its own few KiB (keeping the
# parent's pending -40,000 took its sum below zero and its peak to nearly 2^64 bytes).
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_LIFETIMES=1 profile "$MF_TESTS/prog_life_fork"; rc=$?
is "$rc" 0 "prog_life_fork: parent and child exit 0"
peaks=$(for d in "$mf_work"/malloc_freq.*; do
	"$MF_PRINT" "$d" 2> /dev/null | sed -n 's/^  peak: \(.*\) live in .*/\1/p'
done | sort -n | tr '\n' ' ')
like "$peaks" "^[0-9.]+ KiB [0-9.]+ KiB $" "prog_life_fork: two processes' peaks, each of KiB ($peaks)"
echo "$peaks" | awk '{
	u["B"] = 1; u["KiB"] = 2^10; u["MiB"] = 2^20; u["GiB"] = 2^30; u["TiB"] = 2^40; u["PiB"] = 2^50
	u["EiB"] = 2^60; a = $1 * u[$2]; b = $3 * u[$4]; lo = a < b ? a : b; hi = a < b ? b : a
	exit !(lo < 65536 && hi >= 80000 && hi < 102400) }'
ok $? "prog_life_fork: the child's under 64 KiB, the parent's its two blocks of 40,000 bytes and a little"
done_testing
