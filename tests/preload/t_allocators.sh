#!/bin/sh
# jemalloc, tcmalloc and mimalloc, each preloaded after the profiler and before it: the program
# runs as without the profiler (same output, exit 0) and its memory comes from that allocator.
# In both orders every entry point's calls, in the main thread and in four others, are counted
# exactly, with nothing said on stderr: before the profiler, the objects whose slots lead to the
# allocator are pointed at the profiler's entry points for it (at start, and for a library opened
# later), and the entry points the allocator leaves to glibc (reallocarray: glibc's calls the
# first realloc, the allocator's; pvalloc) reach the profiler as they do after it. C++ `new`:
# each of them defines operator new, which never calls malloc, so `new` is counted in neither
# order (the same count in both). Before the profiler, the same for the program built with its
# segments aligned to 64 KiB pages, as arm64's linkers lay them out (prog_allocator_gap): with
# gaps between them, the loader knows the program's segments apart.
. "$srcdir/tests/tap.sh"
entries="malloc calloc realloc posix_memalign aligned_alloc memalign valloc reallocarray pvalloc"
plugin="$MF_TESTS/.libs/plugin.so"
[ -f "$plugin" ] || bail "no $plugin"

# The entry points and threads of prog_allocator's profile (collapsed) in $1 not counted exactly,
# as "name=got (want N)": nothing when all are.
miscounted() {
	i=0 bad=""
	for e in $entries; do
		want=$((50 * (i + 1)))
		n=$(calls "$1" ";site_$e;$e\$")
		[ "$n" = "$want" ] || bad="$bad $e=$n (want $want)"
		i=$((i + 1))
	done
	n=$(calls "$1" ";thread_main;site_thread;malloc\$")
	[ "$n" = 4000 ] || bad="$bad threads=$n (want 4000)"
	echo "$bad"
}

for spec in libjemalloc.so.2:libjemalloc2 libtcmalloc_minimal.so.4:libtcmalloc-minimal4 \
	libmimalloc.so.2:libmimalloc2.0; do
	lib=$mf_libdir/${spec%%:*} pkg=$(mf_package "${spec#*:}")
	name=$(basename "$lib")
	for order in after before; do
		if [ ! -f "$lib" ]; then
			skip "$name $order the profiler: not installed (apt-get install $pkg)"
			continue
		fi
		if [ $order = after ]; then preload="$MF_LIB $lib"; else preload="$lib $MF_LIB"; fi
		rm -rf "$mf_work"/malloc_freq.*
		# (the allocator alone, the reference: Debian's jemalloc and mimalloc alone sometimes
		# crash or hang on this program, so a reference run killed by a signal or the time
		# limit is taken again, at most 3 times)
		for try in 1 2 3; do
			plain=$(within 60 env LD_PRELOAD="$lib" "$MF_TESTS/prog_allocator"); plain_rc=$?
			[ $plain_rc -lt 124 ] && break
		done
		got=$(MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$preload" "$MF_TESTS/prog_allocator" \
			2> "$mf_work/err"); rc=$?
		is "$rc" "$plain_rc" "$name $order the profiler: exit status $plain_rc, as without it"
		like "$got" "served the memory: yes" "$name $order the profiler: the memory comes from $name"
		is "$got" "$plain" "$name $order the profiler: output unchanged"
		is "$(cat "$mf_work/err")" "" "$name $order the profiler: nothing on stderr"
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
		is "$(miscounted "$mf_work/c.txt")" "" \
			"$name $order the profiler: exact counts for every entry point, in every thread"
		if [ $order = before ]; then
			rm -rf "$mf_work"/malloc_freq.*
			MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$preload" \
				"$MF_TESTS/prog_allocator_gap" > /dev/null 2>&1
			"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
			is "$(miscounted "$mf_work/c.txt")" "" \
				"$name before the profiler, the program's segments 64 KiB apart: exact counts"
		fi

		# a library opened later (eagerly, lazily, lazily with LD_BIND_NOW=1): its calls too
		for mode in now lazy lazy1; do
			rm -rf "$mf_work"/malloc_freq.*
			set -- "$MF_TESTS/prog_dlbind" ${mode%1} "$plugin" 2000
			# (set here, not by env: the machine's own env would be given the library)
			bind=; [ $mode = lazy1 ] && bind=1
			plain=$(LD_BIND_NOW=$bind LD_PRELOAD="$lib" "$@" 2>&1); plain_rc=$?
			got=$(LD_BIND_NOW=$bind MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$preload" "$@" 2>&1); rc=$?
			"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
			is "$rc:$got:$(calls "$mf_work/c.txt" ';run_close;plugin_run;plugin_site;malloc$'):$(calls "$mf_work/c.txt" ';run_close;plugin_entries;calloc$')" \
				"$plain_rc:$plain:2000:200" "$name $order the profiler: a library dlopen'ed later ($mode) runs as without it, its calls counted"
		done

		# C++ new, where the program runs to its end with the allocator
		if LD_PRELOAD="$lib" "$MF_TESTS/prog_cxx" > /dev/null 2>&1; then
			rm -rf "$mf_work"/malloc_freq.*
			MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$preload" "$MF_TESTS/prog_cxx" > /dev/null 2>&1
			"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
			eval "new_$order=\$(calls \"\$mf_work/c.txt\" ';site_new;')"
		else
			eval "new_$order=unrun"
		fi
	done
	if [ -f "$lib" ]; then
		# shellcheck disable=SC2154 # (set by the eval above)
		is "$new_before" "$new_after" "$name: C++ new counted the same in both orders ($new_after)"
	fi
done
done_testing
