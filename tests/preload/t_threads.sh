#!/bin/sh
# Thread lifecycles: thousands of short-lived threads (tids reused: no file overwritten),
# a detached thread still allocating at exit, exit() from a thread, a thread started from an
# atexit handler, short-lived threads in a program that locked all its memory. Counts known by
# construction; files finalized.
. "$srcdir/tests/tap.sh"
n=2500
profile "$MF_TESTS/prog_threads" many $n; rc=$?
is "$rc" 0 "$n short-lived threads: exits 0"
files=$(ls "$mf_work"/malloc_freq.*/ | grep -c '\.prof$')
[ "$files" -ge $((n + 1)) ]; ok $? "one file per thread, none overwritten ($files files for $n threads + main)"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"; ok $? "mf_print reads $files files"
is "$(calls "$mf_work/c.txt" ';site_short;malloc$')" $((n * 10)) "every thread's 10 calls: $((n * 10))"
report=$("$MF_PRINT" "$mf_work"/malloc_freq.*)
if printf '%s\n' "$report" | grep -q "not finalized\|lost"; then fail "all finalized, nothing lost"; else pass "all finalized, nothing lost"; fi

rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_threads" detached; rc=$?
is "$rc" 0 "detached thread allocating when main returns: exits 0"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
d=$(calls "$mf_work/c.txt" ';site_detached;malloc$')
[ "$d" -gt 0 ]; ok $? "the detached thread's calls are there ($d)"
if "$MF_PRINT" "$mf_work"/malloc_freq.* | grep -q "not finalized"; then fail "its file was finalized at exit"; else pass "its file was finalized at exit"; fi

rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_threads" exit_thread; rc=$?
is "$rc" 0 "exit() from a thread: exits 0"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
is "$(calls "$mf_work/c.txt" ';site_exiter;malloc$')" 500 "the exiting thread's 500 calls"

rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_threads" atexit; rc=$?
is "$rc" 0 "thread started from an atexit handler: exits 0"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
is "$(calls "$mf_work/c.txt" ';site_from_atexit;malloc$')" 700 "its 700 calls"
# Every page locked (mlockall): a thread state given back is not zeroed by the kernel then,
# so the next thread's must be emptied by hand (its file was corrupt before); and the profiler's
# memory is locked as it is used, not all it reserved (64 thread states, 64 MiB, before)
rm -rf "$mf_work"/malloc_freq.*
plain=$("$MF_TESTS/prog_threads" mlock 200)
out=$(profile "$MF_TESTS/prog_threads" mlock 200); rc=$?
# (a run that could not lock, or not start its threads, within RLIMIT_MEMLOCK prints no rss)
if ! expr "$plain" : 'rss [0-9][0-9]*$' > /dev/null; then
	skip "mlockall is not allowed here (needs CAP_IPC_LOCK or a larger RLIMIT_MEMLOCK): $plain"
	skip "(the same)"
	skip "(the same)"
elif ! expr "$out" : 'rss [0-9][0-9]*$' > /dev/null; then
	fail "mlockall, 200 short-lived threads: the profiled run printed '$out' (status $rc)"
	skip "(the same)"
	skip "(the same)"
else
	is "$rc" 0 "mlockall, 200 short-lived threads, 4 at a time: exits 0"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> "$mf_work/err"
	is "$(calls "$mf_work/c.txt" ';site_short;malloc$'):$(cat "$mf_work/err")" 2000: \
		"... every thread's 10 calls, 2000, and no file corrupt"
	more=$((${out#rss } - ${plain#rss }))
	[ "$more" -lt 32768 ]; ok $? "... and its resident memory at most 32 MiB over plain ($more KiB more)"
fi
# Huge pages on for all memory (transparent_hugepage=always, as some distributions set it): a
# thread state is touched here and there, and each filled in 2 MiB (2 GiB for 2000 threads)
if grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled 2> /dev/null; then
	rm -rf "$mf_work"/malloc_freq.*
	plain=$("$MF_TESTS/prog_threads" alive 1000)
	out=$(profile "$MF_TESTS/prog_threads" alive 1000)
	if expr "$plain" : 'rss [0-9][0-9]*$' > /dev/null && expr "$out" : 'rss [0-9][0-9]*$' > /dev/null; then
		more=$((${out#rss } - ${plain#rss }))
		[ "$more" -lt 256000 ]; ok $? "transparent huge pages always, 1000 threads alive: at most 250 MiB over plain ($more KiB more)"
	else
		fail "transparent huge pages always, 1000 threads alive: no rss (plain '$plain', profiled '$out')"
	fi
else
	skip "transparent huge pages are not 'always' here: the thread states' size under them not measured"
fi
done_testing
