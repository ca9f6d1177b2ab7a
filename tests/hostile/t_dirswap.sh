#!/bin/sh
# The profile directory moved away while the program runs, and a symlink to a victim directory
# put in its place (by the directory's owner, or by anyone in a shared sticky one: the profiler
# refuses a directory others may write in without the sticky bit). The profiler goes on in the
# directory it created (found by what it holds, not by re-walking its path): the victim is
# untouched, and the thread started afterwards is recorded there.
. "$srcdir/tests/tap.sh"
plugin="$MF_TESTS/.libs/plugin.so"
[ -f "$plugin" ] || bail "no $plugin"
shared="$mf_work/shared" victim="$mf_work/victim"
mkdir "$shared" "$victim" && chmod 1777 "$shared" || bail "cannot make directories"
printf 'the victim'"'"'s own file\n' > "$victim/modules"
before=$(ls -l "$victim"; cat "$victim/modules")
timeout -k 5 30 env MALLOC_FREQ_DIR="$shared" LD_PRELOAD="$MF_LIB" \
	"$MF_TESTS/prog_dirswap" "$mf_work/go" "$plugin" > "$mf_work/out" 2> "$mf_work/err" &
pid=$!
for i in $(seq 200); do [ -s "$mf_work/out" ] && break; sleep 0.05; done
dir=$(head -1 "$mf_work/out")
case $dir in "$shared"/malloc_freq.*) ;; *) kill $pid; bail "no profile directory named: '$dir'" ;; esac
mv "$dir" "$shared/moved" && ln -s "$victim" "$dir" || bail "cannot swap the directory"
touch "$mf_work/go"
wait $pid; rc=$?
is "$rc:$(sed -n 2p "$mf_work/out")" "0:dirswap: done" "the program runs on after its directory was swapped for a symlink"
is "$(ls -l "$victim"; cat "$victim/modules")" "$before" "... the victim directory is untouched (no profile, its own modules file)"
"$MF_PRINT" --collapsed "$shared/moved" > "$mf_work/c.txt" 2> "$mf_work/perr"; prc=$?
is "$prc:$(cat "$mf_work/perr")" "0:" "... mf_print reads the moved directory without an error"
is "$(calls "$mf_work/c.txt" ';site_main;malloc$'):$(calls "$mf_work/c.txt" ';worker;site_thread;malloc$')" "10:100" \
	"... which holds the 10 calls made before and the 100 of the thread started after"
done_testing
