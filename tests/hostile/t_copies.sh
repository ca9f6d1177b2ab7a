#!/bin/sh
# The profiler preloaded twice: a copy of the library at another path before or after it, the
# same file by two paths, and the launcher run with LD_PRELOAD already naming the library or a
# copy. The copy loaded first records, as it would alone; the other stays out of the way: no
# call counted twice, no second process directory (an exec'd image that never was), no thread,
# no signal handler, no line on stderr of its own.
. "$srcdir/tests/tap.sh"
prog="$MF_TESTS/prog_copies"
launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
mkdir -p "$mf_work/copy" "$mf_work/link"
copy="$mf_work/copy/libmalloc_freq.so"
cp "$MF_LIB" "$copy" || bail "cannot copy $MF_LIB"
ln -s "$MF_LIB" "$mf_work/link/libmalloc_freq.so"
link="$mf_work/link/libmalloc_freq.so"
# a snapshot thread and a snapshot signal's handler, and a setting that is said on stderr
MALLOC_FREQ_SNAPSHOT_INTERVAL=600 MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2 MALLOC_FREQ_DEPTH=deep
export MALLOC_FREQ_SNAPSHOT_INTERVAL MALLOC_FREQ_SNAPSHOT_SIGNAL MALLOC_FREQ_DEPTH

# run PRELOAD: the program under PRELOAD, its profile in $mf_work/out
run() {
	rm -rf "$mf_work/out" && mkdir "$mf_work/out"
	within 60 env MALLOC_FREQ_DIR="$mf_work/out" LD_PRELOAD="$1" "$prog" 20000 \
		> "$mf_work/o" 2> "$mf_work/e"
}
run "$MF_LIB"; rc=$?
is "$rc" 0 "one copy: exits 0"
one_err=$(cat "$mf_work/e")
one_total=$(accounted "$mf_work/out"/malloc_freq.*)
one_threads=$(sed -n 's/.*; \([0-9]*\) threads;.*/\1/p' "$mf_work/o")
like "$one_err" "MALLOC_FREQ_DEPTH" "one copy: says once that MALLOC_FREQ_DEPTH is wrong"
is "$(cat "$mf_work/o")" "20000 calls; $one_threads threads; SIGUSR2 taken by $MF_LIB" \
	"one copy: takes SIGUSR2"

for case in "copy after:$MF_LIB $copy:$MF_LIB" "copy before:$copy $MF_LIB:$copy" \
	"the same file by two paths:$MF_LIB $link:$MF_LIB"; do
	what=${case%%:*} rest=${case#*:}
	preload=${rest%%:*} first=${rest#*:}
	run "$preload"; rc=$?
	is "$rc" 0 "$what: exits 0"
	is "$(cat "$mf_work/o")" "20000 calls; $one_threads threads; SIGUSR2 taken by $first" \
		"$what: no thread more, and SIGUSR2 taken by the first copy only"
	is "$(cat "$mf_work/e")" "$one_err" "$what: stderr as with one copy"
	like "$(cd "$mf_work/out" && echo malloc_freq.*)" '^malloc_freq\.[0-9]+$' \
		"$what: one process directory"
	"$MF_PRINT" --collapsed "$mf_work/out"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';site_copies;malloc$')" 20000 "$what: 20000 calls at the site"
	is "$(accounted "$mf_work/out"/malloc_freq.*)" "$one_total" "$what: the total of one copy"
done

# the launcher, with LD_PRELOAD naming the library (a user's setting) or a copy of it
unset MALLOC_FREQ_SNAPSHOT_INTERVAL MALLOC_FREQ_SNAPSHOT_SIGNAL MALLOC_FREQ_DEPTH
[ -x "$launcher" ] || bail "no launcher at $launcher"
for user in "" "$MF_LIB" "$copy"; do
	rm -rf "$mf_work/out"
	# (the launcher runs under the library in LD_PRELOAD too: its own profile goes apart)
	within 60 env LD_PRELOAD="$user" MALLOC_FREQ_DIR="$mf_work" "$launcher" -o "$mf_work/out" \
		"$prog" 20000 > "$mf_work/o" 2> "$mf_work/e"
	rc=$?
	summary=$(sed -n '1s/^malloc_freq: \([0-9]*\) calls.*/\1/p' "$mf_work/e")
	if [ -z "$user" ]; then
		lone=$summary
		is "$rc" 0 "the launcher alone: exits 0"
		continue
	fi
	what="the launcher with LD_PRELOAD=$([ "$user" = "$copy" ] && echo a copy || echo the library)"
	is "$rc" 0 "$what: exits 0"
	is "$summary" "$lone" "$what: the summary counts each call once"
	like "$(cd "$mf_work/out" && echo malloc_freq.*)" '^malloc_freq\.[0-9]+$' \
		"$what: one process directory"
	"$MF_PRINT" --collapsed "$mf_work/out" > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';site_copies;malloc$')" 20000 "$what: 20000 calls at the site"
done
done_testing
