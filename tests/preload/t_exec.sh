#!/bin/sh
# exec() keeps the pid: the new image gets malloc_freq.<pid>.1, the old profile stays whole.
. "$srcdir/tests/tap.sh"
profile "$MF_TESTS/prog_exec" 500 700; rc=$?
is "$rc" 0 "prog_exec exits 0 under the profiler"
first=$(ls -d "$mf_work"/malloc_freq.* | grep -v '\.[0-9]*\.[0-9]*$' | head -1)
second=$first.1
[ -d "$first" ] && [ -d "$second" ]; ok $? "two directories: $(basename "$first") and .1"
"$MF_PRINT" --collapsed "$first" > "$mf_work/a.txt"; ok $? "first image's profile reads"
"$MF_PRINT" --collapsed "$second" > "$mf_work/b.txt"; ok $? "second image's profile reads"
is "$(calls "$mf_work/a.txt" ';site_before_exec;malloc$')" 500 "before exec: 500 calls kept"
is "$(calls "$mf_work/b.txt" ';site_after_exec;malloc$')" 700 "after exec: 700 calls"
is "$(calls "$mf_work/b.txt" 'site_before_exec')" 0 "the new image starts from zero"
"$MF_PRINT" --collapsed "$mf_work" > "$mf_work/all.txt"; ok $? "mf_print on the parent directory reads both"
is "$(calls "$mf_work/all.txt" ';site_(before|after)_exec;malloc$')" 1200 "... and merges them"
done_testing
