#!/bin/sh
# A C++ program: operator new attributed to its site with exact counts, exceptions thrown
# while allocating still caught, output unchanged; names demangled and simplified.
. "$srcdir/tests/tap.sh"
plain=$("$MF_TESTS/prog_cxx"); prc=$?
got=$(profile "$MF_TESTS/prog_cxx"); rc=$?
is "$rc:$got" "$prc:$plain" "same output and status under the profiler"
like "$got" "caught 300 runtime_error, bad_alloc 1" "exceptions thrown while allocating are caught"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"; ok $? "mf_print reads it"
is "$(calls "$mf_work/c.txt" ';site_new;operator new;malloc$')" 1234 "new Node: 1234 calls under operator new"
n=$(calls "$mf_work/c.txt" ';site_throw;__cxa_allocate_exception;malloc$')
is "$n" 300 "each throw allocates its exception object: 300"
is "$(calls "$mf_work/c.txt" ';site_bad_alloc;operator new;malloc$')" 1 "the failing new[] is counted once (operator new[] tail-calls operator new)"
done_testing
