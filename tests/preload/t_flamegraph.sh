#!/bin/sh
# --collapsed output renders with flamegraph.pl (found on PATH, or the copy Debian's
# libdevel-nytprof-perl ships): the SVG names the sites with their exact counts.
. "$srcdir/tests/tap.sh"
fg=$(command -v flamegraph.pl || ls /usr/share/perl5/Devel/NYTProf/flamegraph.pl 2>/dev/null)
[ -n "$fg" ] || skip_all "no flamegraph.pl (apt-get install libdevel-nytprof-perl)"
profile "$MF_TESTS/prog_sites" 2 > /dev/null
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"; ok $? "mf_print --collapsed"
perl "$fg" "$mf_work/c.txt" > "$mf_work/flame.svg" 2> "$mf_work/err"; ok $? "flamegraph.pl accepts it"
is "$(cat "$mf_work/err")" "" "flamegraph.pl has no complaint"
grep -q '<svg' "$mf_work/flame.svg"; ok $? "the output is an SVG"
grep -Eq 'site_malloc \(200 samples' "$mf_work/flame.svg"; ok $? "site_malloc with its 200 calls"
grep -Eq 'site_pvalloc \(1,?800 samples' "$mf_work/flame.svg"; ok $? "site_pvalloc with its 1800 calls"
done_testing
