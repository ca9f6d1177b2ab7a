#!/bin/sh
# mf_print --html read by its real reader, headless Chromium (tests/progs/html_check.js drives it
# through the DevTools protocol): the page loads with no console error and fetches nothing,
# holds the totals of the text report, zooms on a click, highlights a search, switches metric,
# orientation and process, and shows the threshold tree; its screenshot is kept as
# tests/progs/t_html.png.
. "$srcdir/tests/tap.sh"
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
[ -n "$chromium" ] || skip_all "no chromium to read the page (apt-get install chromium)"
command -v node > /dev/null || skip_all "no node to drive chromium (apt-get install nodejs)"
# a shell runs prog_tree, which forks a child: three processes of two programs, so that each
# stack is rooted under its program and site_tree is narrower than the page until zoomed
printf '"%s" forkexit 300 40\nexit 0\n' "$MF_TESTS/prog_tree" > "$mf_work/run.sh"
profile sh "$mf_work/run.sh" > /dev/null; ok $? "sh running prog_tree forkexit 300 40 runs under the profiler"
# (sh is the machine's own: where the library is another processor's, sh is not profiled, and
# the checks of its process skip)
page=$mf_work/page.html
"$MF_PRINT" --html "$page" "$mf_work" 2> "$mf_work/err"; ok $? "--html writes the page"
[ -s "$page" ]; ok $? "the page is there"
is "$(grep -Eic '(src|href) *=|https?://|@import|url\(' "$page")" 0 "self-contained: no src, href, URL or import"
text_total=$("$MF_PRINT" "$mf_work" 2> /dev/null | sed -n '1s/^malloc_freq: \([0-9]*\) calls.*/\1/p')
"$MF_PRINT" --collapsed --bytes "$mf_work" > "$mf_work/bytes" 2> /dev/null
text_bytes=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$mf_work/bytes")
child=$("$MF_PRINT" --processes "$mf_work" 2> /dev/null | sed -n -E 's/.*\] ([0-9]+), _exit\(7\).*/\1/p')
node "$srcdir/tests/progs/html_check.js" "$chromium" "$page" "$MF_TESTS/t_html.png" site_tree "$child" \
	> "$mf_work/seen" 2>&1; ok $? "chromium loads and drives the page"
sed 's/^/# /' "$mf_work/seen"
seen() { sed -n "s/^$1=//p" "$mf_work/seen"; }
is "$(seen ready)" true "the page's script ran to its end"
is "$(seen errors)" "[]" "no console error, no exception"
is "$(seen requests)" "[]" "no request but the page itself"
site=$("$MF_PRINT" --collapsed "$mf_work" 2> /dev/null | awk '/;site_tree;malloc / { s += $NF } END { print s }')
is "$site" 340 "the text report: site_tree's 300 + 40 calls"
is "$(seen total)" "$text_total" "the page's total calls are the text report's"
is "$(seen total_bytes)" "$text_bytes" "metric switch: the page's total bytes are the text report's"
# (6400 B is 6.25 KiB, 7936 B 7.75 KiB, 1250 ns 1.25 us, 1 and 3 of 800 0.125% and 0.375%)
ties=$(printf '%.1f KiB|%.1f KiB|%.1f us|%.0f ns|%.2f%%|%.2f%%' 6.25 7.75 1.25 2.5 0.125 0.375)
is "$(seen ties)" "$ties" "numbers on a rounding tie are the text reports' (printf's): $ties"
is "$(seen found)" true "site_tree is drawn"
is "$(seen zoomed)" site_tree "a click on site_tree zooms into it"
[ "$(seen width_after)" -gt "$(seen width_before)" ]; ok $? "zoomed, site_tree fills the width ($(seen width_before) -> $(seen width_after) px)"
like "$(seen matched)" "^matched: 340 \([0-9.]+%\)$" "a search for site_tree says what it matched"
is "$(seen pixel)" "[224,64,251,255]" "the matched frame is drawn in the highlight colour"
is "$(seen flame_found)" true "the flame orientation draws it too"
if native "the table: the busiest of two programs, sh and prog_tree, first"; then
	like "$(seen table_first)" '^340\|[0-9.]+%\|15\.9 KiB\|\[prog_tree\]$' "the table: the busiest program first, with its calls, share and bytes"
fi
[ "$(seen table_rows)" -ge 4 ]; ok $? "the table: the programs, malloc, site_tree and their callers ($(seen table_rows) rows)"
# frames by function and line: the table is mf_print's own tree, line for line
"$MF_PRINT" --threshold 1 "$mf_work" 2> /dev/null | sed -n '/call stack (allocation <- caller)$/,$p' |
	sed -n -E '2,$s/^ *([0-9]+) +([0-9.]+%) +([^ ]+ [A-Za-z]+)( +([0-9.]+%|-))?  (.*)$/\1|\2|\3|\6/p' > "$mf_work/text_tree"
# (the temporaries column, of format 4 profiles, is not the page's table's)
seen table_lines | tr '\t' '\n' | awk -F'|' -v OFS='|' '{ gsub(/,/, "", $1); print }' > "$mf_work/page_tree"
[ "$(wc -l < "$mf_work/text_tree")" -ge 4 ]; ok $? "the text tree has its lines ($(wc -l < "$mf_work/text_tree"))"
is "$(cat "$mf_work/page_tree")" "$(cat "$mf_work/text_tree")" "the page's table by line is mf_print's tree, line for line"
# --sort temporary --threshold 0: every path, those with no temporary too, as the text tree
"$MF_PRINT" --sort temporary --threshold 0 "$mf_work" 2> /dev/null | sed -n '/call stack (allocation <- caller)$/,$p' |
	sed -n -E '2,$s/^ *[0-9]+ +[0-9.]+% +[^ ]+ [A-Za-z]+ +([0-9.]+%|-)  (.*)$/\2/p' > "$mf_work/text_temp"
seen table_temporary | tr '\t' '\n' | cut -d'|' -f4- > "$mf_work/page_temp"
zero=$("$MF_PRINT" --sort temporary --threshold 0 "$mf_work" 2> /dev/null | grep -c '^ *[0-9]* *0\.00% ')
if native "the text tree by temporaries at threshold 0: lines of none (the shell's)"; then
	[ "$zero" -ge 1 ]; ok $? "the text tree by temporaries at threshold 0 has lines of none ($zero)"
fi
is "$(cat "$mf_work/page_temp")" "$(cat "$mf_work/text_temp")" "the page's table by temporaries at threshold 0 is the text tree's, line for line"
is "$(seen total_process)" 40 "the process filter: the child's 40 calls alone"
is "$(seen threads_listed)" 1 "the thread list: the chosen process's one thread"
is "$(seen total_all_again)" "$text_total" "all processes again: the whole total"
if native "the thread list of all processes: the shell's too"; then
	is "$(seen threads_all)" 3 "the thread list of all processes: the shell's, the parent's, the child's"
fi
is "$(seen total_thread)" 40 "the thread filter: the child's thread alone, its 40 calls"
[ "$(head -c 8 "$MF_TESTS/t_html.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
ok $? "a PNG screenshot kept as tests/progs/t_html.png"
"$MF_PRINT" --html '' "$mf_work" 2> /dev/null; is "$?" 2 "--html '': usage error"
"$MF_PRINT" --html "$page" --collapsed "$mf_work" 2> /dev/null; is "$?" 2 "--html with --collapsed: usage error"
"$MF_PRINT" --html "$mf_work/no/such/dir.html" "$mf_work" 2> "$mf_work/err"; is "$?" 1 "an unwritable page: exit 1"
like "$(cat "$mf_work/err")" "^mf_print: $mf_work/no/such/dir.html: No such file or directory$" "and the error names the file"
"$MF_PRINT" --html - "$mf_work" 2> /dev/null | cmp -s - "$page"; ok $? "--html -: the same page on stdout"
done_testing
