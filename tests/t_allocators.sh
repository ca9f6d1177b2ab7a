#!/bin/sh
# An allocator preloaded after the profiler (jemalloc, tcmalloc) still serves the memory, the
# program's output is unchanged, and the counts are exact.
. "$srcdir/tests/tap.sh"
found=0
for lib in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4; do
	[ -f "$lib" ] || { echo "# $lib not installed"; continue; }
	found=1
	name=$(basename "$lib")
	rm -rf "$mf_work"/malloc_freq.*
	plain=$(LD_PRELOAD="$lib" "$MF_TESTS/prog_allocator")
	got=$(MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB $lib" "$MF_TESTS/prog_allocator"); rc=$?
	is "$rc" 0 "$name: exits 0 under the profiler"
	like "$got" "served the memory: yes" "$name: the memory comes from $name"
	is "$got" "$plain" "$name: output unchanged"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
	i=0 bad=""
	for e in malloc calloc realloc posix_memalign aligned_alloc memalign valloc; do
		n=$(calls "$mf_work/c.txt" ";site_$e;$e\$")
		[ "$n" = $((50 * (i + 1))) ] || bad="$bad $e=$n"
		i=$((i + 1))
	done
	is "${bad:-}" "" "$name: exact counts for all seven entry points"
done
[ $found = 1 ] || skip_all "neither jemalloc nor tcmalloc installed (apt-get install libjemalloc2 libtcmalloc-minimal4)"
done_testing
