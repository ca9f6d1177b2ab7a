#!/bin/sh
# The process's peak of live bytes (DHAT's t-gmax) to the byte in a program with one thread,
# whose changes around it are far smaller than the profiler's batch (tests/prog_peak.c): what
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
done_testing
