#!/bin/sh
# A program that defines malloc, calloc, realloc and free itself (tests/progs/prog_ownalloc.c; its
# free aborts on a block it did not give): each entry point it does not define reaches, under
# the profiler, what it reaches without it (reallocarray: glibc's calls the program's realloc;
# the aligned ones: glibc's own blocks, which the program does not free), so the program runs
# as without the profiler and prints the same; its allocator sees the same calls (none of the
# loader's work for the profiler: loading libunwind, each thread's block of libunwind's
# thread-local variables, the snapshot thread's table of thread-local blocks, with and without
# libunwind loaded); the calls that reach the profiler are counted exactly, and it says which
# entry points it cannot see.
. "$srcdir/tests/tap.sh"
prog="$MF_TESTS/prog_ownalloc"
want=$(within 60 "$prog"); want_rc=$?
is "$want_rc" 0 "without the profiler: exits 0"
own_line() { printf '%s\n' "$1" | grep '^own allocator:'; }
# Before glibc 2.34 a thread's first dlsym allocates the thread's dlerror state with the first
# calloc in the lookup order, the program's, before the profiler can lead it elsewhere: the
# profiler's first look-up is one calloc more there (docs/internals.md, Limits). By
# construction, then, exactly one.
dlerror_calloc=0 dlerror_why=""
glibc=$(getconf GNU_LIBC_VERSION 2> /dev/null | sed -n 's/^glibc \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
if [ -n "$glibc" ] && [ "${glibc% *}" -eq 2 ] && [ "${glibc#* }" -lt 34 ]; then
	dlerror_calloc=1
	dlerror_why=" but one calloc (glibc ${glibc% *}.${glibc#* } allocates the first dlsym's dlerror state there)"
fi
want_own=$(own_line "$want" | awk -v more=$dlerror_calloc \
	'{ for (i = 1; i <= NF; i++) if ($(i - 1) == "calloc") { sub(/,$/, "", $i); $i = $i + more "," } print }')
want=$(printf '%s\n' "$want" | sed "s/^own allocator:.*/$want_own/")
# lifetimes off and on with a fresh rule cache (the profiler loads libunwind); then with the
# cache the first run left (no libunwind) and a snapshot thread
for run in "lifetimes 0:0:" "lifetimes 1:1:" "a snapshot thread:0:600"; do
	life=${run#*:} interval=${life#*:} life=${life%%:*} what=${run%%:*}
	rm -rf "$mf_work"/malloc_freq.*
	[ "$what" = "a snapshot thread" ] || rm -rf "$MALLOC_FREQ_CACHE"
	got=$(MALLOC_FREQ_LIFETIMES=$life MALLOC_FREQ_SNAPSHOT_INTERVAL=${interval:-off} \
		profile_within 60 "$prog" 2> "$mf_work/err"); rc=$?
	is "$rc" "$want_rc" "$what: exit status $want_rc, as without the profiler"
	is "$(own_line "$got")" "$want_own" \
		"$what: the program's allocator counts the same calls$dlerror_why"
	is "$got" "$want" "$what: the same output$dlerror_why"
	is "$(cat "$mf_work/err")" "malloc_freq: the program defines malloc, calloc, realloc and free itself: the profiler does not see their calls" \
		"$what: says which entry points it cannot see"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	i=0 bad=""
	for e in reallocarray posix_memalign aligned_alloc memalign valloc pvalloc; do
		n=$(calls "$mf_work/c.txt" ";site_$e;$e\$")
		[ "$n" = $((10 * (i + 1))) ] || bad="$bad $e=$n"
		i=$((i + 1))
	done
	is "${bad:-}" "" "$what: exact counts at the six sites"
	is "$(calls "$mf_work/c.txt" ';thread_main;posix_memalign$')" 40 \
		"$what: the threads' 40 calls"
	is "$(calls "$mf_work/c.txt" ';(malloc|calloc|realloc)$')" 0 \
		"$what: none of the program's own malloc, calloc, realloc"
done

# A program built without PIE that takes malloc's and free's addresses has canonical PLT
# entries for them (undefined symbols with a value, which dlsym finds): it defines neither, so
# nothing is said, and every call is seen (tests/progs/prog_addr_alloc.c)
rm -rf "$mf_work"/malloc_freq.*
got=$(profile_within 60 "$MF_TESTS/prog_addr_alloc" 100 2> "$mf_work/err"); rc=$?
is "$rc $got" "0 done 100" "malloc's address taken, no PIE: runs as without the profiler"
is "$(cat "$mf_work/err")" "" "... and says nothing of defining malloc or free itself"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
is "$(calls "$mf_work/c.txt" ';malloc$')" 200 "... and counts its 200 malloc calls, through the address and direct"
done_testing
