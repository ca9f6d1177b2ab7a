#!/bin/sh
# mf_print reading a profile while its program runs: the process loads a library after
# mf_print has read its module map, and a thread's file then names that library's module.
# mf_print reads the map again (it only grows) and reports the thread whole, where it left
# the thread out ("names module 6, the module map has 6", exit status 1). gdb holds mf_print
# at its first thread file while the program (tests/progs/prog_dlopen.c) loads the plugin.
. "$srcdir/tests/tap.sh"
command -v gdb > /dev/null || skip_all "gdb is not installed (it holds mf_print between its reads)"
# (this machine's gdb cannot run an mf_print of another processor, which qemu-user runs)
[ "$mf_arch" = "$(uname -m)" ] ||
	skip_all "gdb cannot hold mf_print between its reads: mf_print is $mf_arch's, run by qemu-user"
go=$mf_work/go
rm -f "$go"
env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_dlopen" "$MF_TESTS/.libs/plugin.so" 100 "$go" > /dev/null &
pid=$!
for i in $(seq 100); do
	[ -e "$mf_work/malloc_freq.$pid/modules" ] && break
	sleep 0.05
done
cat > "$mf_work/gdb" << GDB
set pagination off
break mf_read_profile
run
shell touch "$go"; while kill -0 $pid 2> /dev/null; do sleep 0.05; done
delete
continue
GDB
# (LeakSanitizer, in a sanitizer build, cannot work under ptrace: it would end mf_print 1)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 120 gdb -batch -x "$mf_work/gdb" --args "$MF_PRINT" --collapsed "$mf_work/malloc_freq.$pid" \
	> "$mf_work/gdb.out" 2> "$mf_work/gdb.err"
touch "$go" # (where gdb failed before its script said go, the program must not wait for ever)
wait $pid
is "$?" 0 "prog_dlopen exits 0"
like "$(cat "$mf_work/gdb.out")" "exited normally" "mf_print, held while the program loads a library, exits 0"
is "$(grep -v '^ok\|^not ok' "$mf_work/gdb.err" | grep -c 'mf_print:')" 0 "and says nothing of module numbers"
grep ';' "$mf_work/gdb.out" > "$mf_work/stacks"
is "$(calls "$mf_work/stacks" ';plugin_site;malloc$')" 100 "the thread's 100 calls in the library loaded meanwhile are there"
done_testing
