#!/bin/sh
# Processes: a fork storm from four threads at once, posix_spawn / vfork / system, and an exec
# chain of three images: every process gets its own directory with exactly its own calls.
. "$srcdir/tests/tap.sh"
n=25
# (under qemu-user a child forked from threads may wait for ever on a lock of qemu's own, as
# t_hazards says: the storm is this machine's only)
storm() {
	profile "$MF_TESTS/prog_spawn" storm $n; rc=$?
	is "$rc" 0 "fork storm: 4 threads x $n forks, exits 0"
	dirs=$(ls -d "$mf_work"/malloc_freq.* | wc -l)
	is "$dirs" $((4 * n + 1)) "one directory per process ($((4 * n)) children + the parent)"
	bad=0 children=0
	for d in "$mf_work"/malloc_freq.*; do
		"$MF_PRINT" --collapsed "$d" > "$mf_work/c.txt" 2>/dev/null || bad=$((bad + 1))
		c=$(calls "$mf_work/c.txt" ';site_child;malloc$')
		p=$(calls "$mf_work/c.txt" ';site_parent;malloc$')
		if [ "$c" -gt 0 ]; then
			children=$((children + 1))
			[ "$c" = 100 ] && [ "$p" = 0 ] || bad=$((bad + 1))
		else
			[ "$p" = $((4 * n * 100)) ] || bad=$((bad + 1))
		fi
	done
	is "$children:$bad" "$((4 * n)):0" "each child exactly its 100 calls, the parent exactly its $((4 * n * 100))"
}
if native "fork storm from 4 threads (qemu-user's own locks)"; then storm; fi

rm -rf "$mf_work"/malloc_freq.*
out=$(profile "$MF_TESTS/prog_spawn" spawn "$MF_TESTS/prog_kill"); rc=$?
is "$rc:$out" "0:spawned: ok" "posix_spawn, vfork+exec and system() run as without the profiler"
"$MF_PRINT" --collapsed "$mf_work" > "$mf_work/c.txt" 2>/dev/null
is "$(calls "$mf_work/c.txt" ';site_before_end;malloc$')" $((3 * 321)) "the three spawned programs' calls: 3 x 321"

rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_spawn" chain 2; rc=$?
is "$rc" 0 "exec chain A -> B -> C exits 0"
first=$(ls -d "$mf_work"/malloc_freq.* | grep -v '\.[0-9]*\.[0-9]*$')
for k in 0 1 2; do
	d=$first; [ $k -gt 0 ] && d=$first.$k
	"$MF_PRINT" --collapsed "$d" > "$mf_work/c.txt" 2>/dev/null
	is "$(calls "$mf_work/c.txt" ';site_image;malloc$')" $((100 * (3 - k))) "image $((k + 1)) of 3: its own $((100 * (3 - k))) calls in $(basename "$d")"
done
done_testing
