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

# Loaded by a relative path (dlopen("./plugin.so"), as with LD_LIBRARY_PATH=.), the library is
# recorded by its absolute path: mf_print, run from another directory, names its frames
rm -rf "$mf_work"/malloc_freq.*
mkdir "$mf_work/here" && cp "$plugin" "$mf_work/here/plugin.so"
(cd "$mf_work/here" && MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_dlopen" ./plugin.so 222); rc=$?
is "$rc" 0 "prog_dlopen ./plugin.so (relative) exits 0 under the profiler"
(cd / && "$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null)
is "$(calls "$mf_work/c.txt" ';plugin_run;plugin_site;malloc$')" 222 "mf_print run from / names the relatively loaded library's frames: 222 calls"
grep -q "$mf_work/here/plugin.so" "$mf_work"/malloc_freq.*/modules; ok $? "the module map has its absolute path"

# A page the profiler needs while it looks at a newly loaded library cannot be had: the
# objects it had already seen stay in the map.
rm -rf "$mf_work"/malloc_freq.*
cp "$plugin" "$mf_work/plugin2.so"
out=$(MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_TESTS/.libs/failmap.so:$MF_LIB" \
	"$MF_TESTS/prog_mapfail" "$plugin" "$mf_work/plugin2.so"); rc=$?
is "$rc $out" "0 pages failed: 1" "prog_mapfail exits 0, one page allocation failed"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> "$mf_work/err"
is "$(calls "$mf_work/c.txt" ';main;site_after_failure;malloc$')" 100 \
	"after the failure, main's 100 calls keep their frames"
done_testing
