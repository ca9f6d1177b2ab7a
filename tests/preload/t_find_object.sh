#!/bin/sh
# The loaded objects found without glibc's _dl_find_object (glibc before 2.35 has none):
# MALLOC_FREQ_FIND_OBJECT=table makes the profiler use its own table of the loaded objects,
# made from dl_iterate_phdr and made again when the loader loads or unloads one. Stacks through
# a library loaded after start, and after it was unloaded, count exactly and equal libunwind's.
# (make check-fallback runs every preload test so.)
. "$srcdir/tests/tap.sh"
plugin="$MF_TESTS/.libs/plugin.so"
[ -f "$plugin" ] || bail "no $plugin"

# A value it does not know is said, and the loader's lookup is used.
MALLOC_FREQ_FIND_OBJECT=bogus profile "$MF_TESTS/prog_dlopen" "$plugin" 10 > /dev/null 2> "$mf_work/err"
is "$?" 0 "MALLOC_FREQ_FIND_OBJECT=bogus: prog_dlopen exits 0"
is "$(grep -c 'MALLOC_FREQ_FIND_OBJECT="bogus" is not one of loader, table; using loader' "$mf_work/err")" 1 \
	"MALLOC_FREQ_FIND_OBJECT=bogus is said once on stderr"

for mode in cached check; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_FIND_OBJECT=table MALLOC_FREQ_UNWIND=$mode profile "$MF_TESTS/prog_dlopen" "$plugin" 333 \
		> /dev/null 2> "$mf_work/err"
	is "$?" 0 "table, $mode: prog_dlopen exits 0"
	is "$(grep -v 'unwind check: [0-9]* stacks compared' "$mf_work/err")" "" "table, $mode: nothing else on stderr"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';main;.*plugin_run;plugin_site;malloc$'):$(calls "$mf_work/c.txt" ';main;site_after_dlclose;malloc$')" \
		"333:1" "table, $mode: the loaded library's 333 calls and the 1 after its dlclose, whole stacks"
done
is "$(grep -c 'unwind check: \(frame\|hot\)' "$mf_work/err")" 0 "table, check: every stack equals libunwind's"

# Deep stacks in the program itself: the cached walk reads their rules from .eh_frame, found
# through the table.
MALLOC_FREQ_FIND_OBJECT=table MALLOC_FREQ_UNWIND=check profile "$MF_TESTS/prog_deep" 5 \
	> /dev/null 2> "$mf_work/err"
is "$?" 0 "table, check: prog_deep exits 0"
summary=$(sed -n 's/.*unwind check: \([0-9]* stacks compared, [0-9]* by the cached walk, [0-9]* differed\).*/\1/p' "$mf_work/err")
like "$summary" '^[1-9][0-9]* stacks compared, [1-9][0-9]* by the cached walk, 0 differed$' \
	"table, check: prog_deep's stacks walked by the cached rules, none differs from libunwind's"
done_testing
