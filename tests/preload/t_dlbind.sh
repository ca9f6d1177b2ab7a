#!/bin/sh
# A library that reaches an allocator past the preloaded entry points: opened with
# RTLD_DEEPBIND (its lookups find its own libc's malloc first), eagerly or lazily, with
# LD_BIND_NOW=1 or not; or into namespaces of its own with dlmopen (each with a libc, and a
# heap, of its own), reopened, one opened into another's namespace. Each way the program runs as
# without the profiler, the plugin's calls of every entry point are recorded, exactly, under its
# named frames (no [jit], none of the profiler's), and check mode finds every stack libunwind's. A caller's RUNPATH still finds a library
# opened with RTLD_DEEPBIND, and an allocator preloaded after the profiler is no library's.
. "$srcdir/tests/tap.sh"
plugin="$MF_TESTS/.libs/plugin.so"
[ -f "$plugin" ] || bail "no $plugin"
cp "$plugin" "$mf_work/plugin2.so"
n=10000
entries="calloc realloc reallocarray posix_memalign aligned_alloc memalign valloc pvalloc"
want_entries=; for e in $entries; do want_entries="$want_entries $e=$((n / 10))"; done
MALLOC_FREQ_UNWIND=check
export MALLOC_FREQ_UNWIND
# run BIND CMD...: CMD with LD_BIND_NOW=1 if BIND is 1
run() { if [ "$1" = 1 ]; then shift; (LD_BIND_NOW=1 && export LD_BIND_NOW && "$@"); else shift; "$@"; fi; }
for mode in now lazy deep deeplazy newlm two again inside; do
	for bind in 0 1; do
		set -- "$MF_TESTS/prog_dlbind" $mode "$plugin" $n "$mf_work/plugin2.so"
		want=$(run $bind within 60 "$@" 2>&1); prc=$?
		rm -rf "$mf_work"/malloc_freq.*
		got=$(run $bind profile_within 60 "$@" 2> "$mf_work/err"); rc=$?
		is "$rc:$got" "$prc:$want" "$mode, LD_BIND_NOW=$bind: runs as without the profiler"
		# (a glibc before 2.35, or the table forced, sees no other namespace, and says so)
		case $mode in newlm | two | again | inside)
			if grep -q "does not list its namespaces" "$mf_work/err"; then
				for what in "its calls" "each entry point" "no [jit] frame" "none of the profiler's" "check mode"; do
					skip "$mode, LD_BIND_NOW=$bind: $what: dlmopen's namespaces are not seen here, as stderr says"
				done
				continue
			fi
		esac
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
		is "$(calls "$mf_work/c.txt" ';main;run_close;plugin_run;plugin_site;malloc$')" $n \
			"... the plugin's $n calls, under its frames"
		got=; for e in $entries; do got="$got $e=$(calls "$mf_work/c.txt" ";main;run_close;plugin_entries;$e\$")"; done
		is "$got" "$want_entries" "... and $((n / 10)) of each other entry point"
		is "$(grep -c '\[jit\]' "$mf_work/c.txt")" 0 "... no frame taken for code no object maps"
		is "$(grep -c 'mf_\|malloc_freq' "$mf_work/c.txt")" 0 "... nor any of the profiler's"
		like "$(cat "$mf_work/err")" "unwind check: [0-9]+ stacks compared, [0-9]+ by the cached walk, 0 differed" \
			"... and no stack differs from libunwind's"
	done
done
unset MALLOC_FREQ_UNWIND

# a program with RUNPATH $ORIGIN/plugins that opens a plugin by name with RTLD_DEEPBIND
mkdir -p "$mf_work/app/plugins"
cp "$plugin" "$mf_work/app/plugins/libmfplug.so"
cat > "$mf_work/app/main.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *h = dlopen("libmfplug.so", RTLD_NOW | RTLD_DEEPBIND);
	void (*run)(long) = h ? (void (*)(long))dlsym(h, "plugin_run") : NULL;
	if (run)
		run(1000);
	printf("%s\n", run ? "loaded through RUNPATH" : dlerror());
	return run ? 0 : 1;
}
C
${CC:-cc} -o "$mf_work/app/main" "$mf_work/app/main.c" -ldl -Wl,-rpath,'$ORIGIN/plugins' || bail "cannot compile"
want=$("$mf_work/app/main" 2>&1); prc=$?
rm -rf "$mf_work"/malloc_freq.*
got=$(profile_within 60 "$mf_work/app/main" 2>&1); rc=$?
is "$rc:$got" "$prc:$want" "RTLD_DEEPBIND by name through the caller's RUNPATH (\$ORIGIN): found as without the profiler"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
is "$(calls "$mf_work/c.txt" ';main;plugin_run;plugin_site;malloc$')" 1000 "... and its 1000 calls recorded"

# jemalloc preloaded after the profiler serves the program, libc the library opened with
# RTLD_DEEPBIND and the namespace's libc the namespace: each call reaches the allocator it
# reaches without the profiler, and is recorded. (malloc only: without the profiler, that
# library's reallocarray is libc's, whose realloc is jemalloc's, and its free libc's, which
# aborts; with it, the block moves with libc's realloc: see docs/internals.md.)
MALLOC_ONLY=1
export MALLOC_ONLY
jemalloc=$mf_libdir/libjemalloc.so.2
if [ -f "$jemalloc" ]; then
	for mode in deep newlm; do
		want=$(within 60 env LD_PRELOAD="$jemalloc" "$MF_TESTS/prog_dlbind" $mode "$plugin" $n 2>&1); prc=$?
		rm -rf "$mf_work"/malloc_freq.*
		got=$(MF_AFTER="$jemalloc" && profile_within 60 "$MF_TESTS/prog_dlbind" $mode "$plugin" $n 2> "$mf_work/err"); rc=$?
		is "$rc:$got" "$prc:$want" "$mode with jemalloc preloaded after the profiler: runs as without it"
		if [ $mode = newlm ] && grep -q "does not list its namespaces" "$mf_work/err"; then
			skip "$mode with jemalloc: the plugin's calls: dlmopen's namespaces are not seen here, as stderr says"
			continue
		fi
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
		is "$(calls "$mf_work/c.txt" ';main;run_close;plugin_run;plugin_site;malloc$')" $n "... and the plugin's $n calls are recorded"
	done
else
	skip "no $jemalloc (apt-get install $(mf_package libjemalloc2))"
fi
done_testing
