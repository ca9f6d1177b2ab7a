#!/bin/sh
# Frames of a library loaded with dlopen symbolize, even after it was unloaded.
. "$srcdir/tests/tap.sh"
plugin="$MF_TESTS/.libs/plugin.so"
[ -f "$plugin" ] || bail "no $plugin"
profile "$MF_TESTS/prog_dlopen" "$plugin" 333; rc=$?
is "$rc" 0 "prog_dlopen exits 0 under the profiler"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> "$mf_work/err"; ok $? "mf_print exits 0"
is "$(calls "$mf_work/c.txt" ';plugin_run;plugin_site;malloc$')" 333 "plugin frames symbolized after dlclose: 333 calls"
is "$(calls "$mf_work/c.txt" ';site_after_dlclose;malloc$')" 1 "the call after dlclose is attributed to the main program"
grep -q plugin.so "$mf_work"/malloc_freq.*/modules; ok $? "the module map names the plugin"
done_testing
