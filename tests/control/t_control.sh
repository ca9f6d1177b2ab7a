#!/bin/sh
# Recording switched on and off through the API, MALLOC_FREQ_START=off: counts known by
# construction (tests/progs/prog_control.c) exact per site and per thread, nothing recorded while
# off, and the calls made while off counted exactly, in malloc_freq_stats and in the report.
. "$srcdir/tests/tap.sh"
n=1000 m=2000 k=3000 l=4000
MALLOC_FREQ_START=off profile "$MF_TESTS/prog_control" $n $m $k $l > "$mf_work/out" 2> "$mf_work/err"
rc=$?
is "$rc" 0 "the program's own checks of malloc_freq_stats pass (exit 0)"
grep FAIL "$mf_work/out" | sed 's/^/# /'
is "$(cat "$mf_work/err")" "" "nothing said on stderr"
dir=$(ls -d "$mf_work"/malloc_freq.*)
tid() { awk -v n="$1" '$1 == "tid" && $2 == n { print $3 }' "$mf_work/out"; }
"$MF_PRINT" --collapsed "$dir" > "$mf_work/all" 2> /dev/null; ok $? "mf_print reads it"
for site in site_before site_after site_after_c site_k_b; do
	is "$(calls "$mf_work/all" ";$site;malloc\$")" 0 "$site: made while off, not recorded"
done
# each site in its thread, and nowhere else
for x in main:site_on_main:$m a:site_on_a:$m b:site_on_b:$m a:site_k_a:$k; do
	set -- $(echo "$x" | tr : ' ')
	"$MF_PRINT" --collapsed --thread "$(tid "$1")" "$dir" > "$mf_work/t" 2> /dev/null
	is "$(calls "$mf_work/t" ";$2;malloc\$")" "$3" "$2: $3 calls in thread $1"
	is "$(calls "$mf_work/all" ";$2;malloc\$")" "$3" "$2: $3 calls in all threads"
done
"$MF_PRINT" --collapsed --bytes "$dir" > "$mf_work/bytes" 2> /dev/null
is "$(calls "$mf_work/bytes" ';site_k_a;malloc$')" $((k * 50)) "site_k_a: its bytes ($k x 50)"
off=$(awk '$1 == "off" { print $2 }' "$mf_work/out")
[ "$off" -ge $((n + k + 2 * l)) ]; ok $? "malloc_freq_stats: $off calls off, at least N + K + 2L"
like "$("$MF_PRINT" "$dir" 2> /dev/null)" "^  $off calls were made while recording was off" \
	"the summary says the same $off calls were made while off"
is "$(awk '$1 == "threads" { print $2 }' "$mf_work/out")" \
	"$(ls "$dir" | grep -c '\.prof$')" "malloc_freq_stats counts a thread per file"

# started off, never enabled: the directory is made at start, nothing recorded
if native "MALLOC_FREQ_START=off and =maybe, in sh"; then
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_START=off profile sh -c 'exit 0'; is "$?" 0 "started off, never enabled: runs"
ls -d "$mf_work"/malloc_freq.* > /dev/null 2>&1; ok $? "the directory is made at start"
like "$("$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null)" "^malloc_freq: 0 calls" \
	"nothing recorded"

# the setting is validated like the others
rm -rf "$mf_work"/malloc_freq.*
err=$(MALLOC_FREQ_START=maybe profile sh -c 'exit 0' 2>&1 > /dev/null)
is "$err" 'malloc_freq: MALLOC_FREQ_START="maybe" is not one of on, off; using on' \
	"MALLOC_FREQ_START=maybe: one line on stderr"
like "$("$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null)" "^malloc_freq: [1-9][0-9]* calls" \
	"and the default (on) is used"
fi
done_testing
