#!/bin/sh
# Exact per-site counts and bytes from a multi-threaded program calling every entry point a
# known number of times from its own function; output and exit status unchanged.
. "$srcdir/tests/tap.sh"

threads=4
plain=$("$MF_TESTS/prog_sites" $threads); plain_rc=$?
got=$(profile "$MF_TESTS/prog_sites" $threads); got_rc=$?
is "$got" "$plain" "stdout is the same under the profiler"
is "$got_rc" "$plain_rc" "exit status is the same under the profiler ($plain_rc)"
set -- "$mf_work"/malloc_freq.*
is "$#" 1 "one profile directory"
d=$1
case "$(basename "$d")" in malloc_freq.[0-9]*) pass "directory is named malloc_freq.<pid>";; *) fail "directory is named malloc_freq.<pid>: $d";; esac
nprof=$(ls "$d" | grep -c '\.prof$')
is "$nprof" $((threads + 1)) "one .prof file per thread that allocated (main + $threads)"
[ -f "$d/modules" ]; ok $? "module map written"
"$MF_PRINT" --collapsed "$d" > "$mf_work/c.txt"; ok $? "mf_print --collapsed exits 0"
"$MF_PRINT" --collapsed --bytes "$d" > "$mf_work/b.txt"; ok $? "mf_print --collapsed --bytes exits 0"
i=0
for e in malloc calloc realloc reallocarray posix_memalign aligned_alloc memalign valloc pvalloc; do
	want=$((threads * 100 * (i + 1)))
	n=$(calls "$mf_work/c.txt" ";site_$e;$e\$")
	b=$(calls "$mf_work/b.txt" ";site_$e;$e\$")
	other=$(calls "$mf_work/c.txt" ";site_$e;")
	if [ "$n" = "$want" ] && [ "$b" = $((want * 64 * (i + 1))) ] && [ "$other" = "$n" ]; then
		pass "$e: $n calls, $b bytes from site_$e, counted once"
	else
		fail "$e: want $want calls and $((want * 64 * (i + 1))) bytes; got $n calls, $b bytes ($other in all under site_$e)"
	fi
	i=$((i + 1))
done
bad=$(grep -Ec '(^|;)(mf_[a-z_]+|malloc_freq[a-z_]*)(;| )' "$mf_work/c.txt")
is "$bad" 0 "no profiler frames in any stack"
bad=$(grep -Evc '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$mf_work/c.txt")
is "$bad" 0 "every collapsed line is 'frame;...;frame COUNT'"
bad=$(grep -Evc ';?(malloc|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc) [0-9]+$' "$mf_work/c.txt")
is "$bad" 0 "every stack ends with the entry point"
tree=$("$MF_PRINT" --threshold 0 --dir "$d"); ok $? "tree report exits 0"
like "$tree" "^malloc_freq: [0-9]+ calls, .* $((threads + 1)) threads in $((threads + 1)) files from 1 directory" "summary counts threads and files"
like "$tree" "^ +$((threads * 100)) +[0-9.]+% +[0-9.]+ KiB +[0-9.]+% +\|- site_malloc prog_sites.c:[0-9]+$" "tree: malloc <- site_malloc with file:line, exact count, temporaries"
like "$tree" "^ +$((threads * 900)) .*pvalloc$" "tree: pvalloc at the root with its count"
if printf '%s\n' "$tree" | grep -q "not finalized\|not attributed\|lost"; then fail "all files finalized, nothing lost or nested"; else pass "all files finalized, nothing lost or nested"; fi
caller=$("$MF_PRINT" --caller --threshold 0 "$d")
like "$caller" "site_malloc prog_sites.c:[0-9]+$" "--caller tree shows the site"
like "$caller" "^ +[0-9]+ .*worker prog_sites.c" "--caller tree goes through worker"
thr=$("$MF_PRINT" --threads --threshold 0 "$d"); ok $? "--threads exits 0"
like "$thr" "^ +$((threads * 100))( +100){$threads} +0? *site_malloc prog_sites.c:[0-9]+$|^ +$((threads * 100)) +0( +100){$threads} +site_malloc" "--threads: site_malloc 100 calls in each worker column"
# a worker's: any thread but main, whose tid is the pid (thread ids wrap: the largest may be
# main's)
tid=$(ls "$d" | grep '\.prof$' | sed 's/\.prof$//' | grep -vx "${d##*.}" | head -1)
"$MF_PRINT" --collapsed --thread "$tid" "$d" > "$mf_work/t.txt"
is "$(calls "$mf_work/t.txt" ';site_malloc;malloc$')" 100 "--thread $tid: 100 calls from site_malloc"
"$MF_PRINT" --thread 1 "$d" > /dev/null 2> "$mf_work/err"; rc=$?
is "$rc" 3 "--thread with an unknown tid exits 3 (chose nothing)"
like "$(cat "$mf_work/err")" "no thread with id 1" "... and says so"
sorted=$("$MF_PRINT" --sort bytes --threshold 0 "$d" | awk 'on && NF; /call stack/ { on = 1 }' | head -1)
like "$sorted" "pvalloc$" "--sort bytes puts the largest byte count (pvalloc) first"
"$MF_PRINT" --collapsed "$d" "$d" > "$mf_work/twice.txt"
is "$(calls "$mf_work/twice.txt" ';site_malloc;malloc$')" $((threads * 200)) "the same directory twice merges (counts double)"
done_testing
