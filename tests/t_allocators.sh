#!/bin/sh
# jemalloc, tcmalloc and mimalloc, each preloaded after the profiler and before it: the program
# runs as without the profiler (same output, exit 0) and its memory comes from that allocator.
# After the profiler, every entry point's calls are counted exactly. Before it, the allocator's
# own definitions come first in the lookup order: the profiler never sees their calls, and says
# which on stderr; the entry points the allocator leaves to glibc (reallocarray: glibc's calls
# the first realloc, the allocator's; pvalloc) reach the profiler and are counted exactly.
. "$srcdir/tests/tap.sh"
libdir=/usr/lib/x86_64-linux-gnu
entries="malloc calloc realloc posix_memalign aligned_alloc memalign valloc reallocarray pvalloc"
# the entry points in the order the profiler names them
named="malloc calloc realloc reallocarray free posix_memalign aligned_alloc memalign valloc pvalloc"

# defined LIB: the entry points LIB defines, in the order the profiler names them
defined() {
	syms=" $(nm -D --defined-only "$1" | awk '{ print $3 }' | tr '\n' ' ') "
	for e in $named; do
		case "$syms" in *" $e "*) printf '%s ' "$e" ;; esac
	done
}
# listed NAMES...: "a, b and c", as the profiler's message lists them
listed() {
	list=$1; shift
	while [ $# -gt 1 ]; do list="$list, $1"; shift; done
	[ $# = 1 ] && list="$list and $1"
	printf '%s' "$list"
}

for spec in libjemalloc.so.2:libjemalloc2 libtcmalloc_minimal.so.4:libtcmalloc-minimal4 \
	libmimalloc.so.2:libmimalloc2.0; do
	lib=$libdir/${spec%%:*} pkg=${spec#*:}
	name=$(basename "$lib")
	for order in after before; do
		if [ ! -f "$lib" ]; then
			skip "$name $order the profiler: not installed (apt-get install $pkg)"
			continue
		fi
		if [ $order = after ]; then preload="$MF_LIB $lib"; else preload="$lib $MF_LIB"; fi
		rm -rf "$mf_work"/malloc_freq.*
		plain=$(LD_PRELOAD="$lib" "$MF_TESTS/prog_allocator"); plain_rc=$?
		got=$(MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$preload" "$MF_TESTS/prog_allocator" \
			2> "$mf_work/err"); rc=$?
		is "$rc" "$plain_rc" "$name $order the profiler: exit status $plain_rc, as without it"
		like "$got" "served the memory: yes" "$name $order the profiler: the memory comes from $name"
		is "$got" "$plain" "$name $order the profiler: output unchanged"
		unseen=""
		if [ $order = before ]; then
			if command -v nm > /dev/null; then
				unseen=$(defined "$lib")
				# shellcheck disable=SC2086 # (a list of words)
				is "$(cat "$mf_work/err")" "malloc_freq: $lib, loaded before the profiler, defines $(listed $unseen): the profiler does not see their calls (preload it after the profiler)" \
					"$name before the profiler: says which entry points it cannot see"
			else
				skip "$name before the profiler: no nm (binutils) to list what it defines"
				continue
			fi
		else
			is "$(cat "$mf_work/err")" "" "$name after the profiler: nothing on stderr"
		fi
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
		i=0 bad=""
		for e in $entries; do
			want=$((50 * (i + 1)))
			case " $unseen" in *" $e "*) want=0 ;; esac
			n=$(calls "$mf_work/c.txt" ";site_$e;$e\$")
			[ "$n" = "$want" ] || bad="$bad $e=$n (want $want)"
			i=$((i + 1))
		done
		is "${bad:-}" "" "$name $order the profiler: exact counts for the entry points it sees"
	done
done
done_testing
