#!/bin/sh
# What a program writes into its profile reaches mf_print's text safely:
# - thread names with a newline, terminal escape sequences and a tab, and a library whose file
#   name holds such bytes (unsymbolized, so its name is printed): no control character reaches
#   any report or warning, and the --threads table keeps its shape;
# - requested sizes whose sum passes 2^64 (4 failing calls of SIZE_MAX / 2 bytes and one of
#   100: 2^65 + 96): no total wraps round; a total held at its maximum says so.
. "$srcdir/tests/tap.sh"
plugin="$MF_TESTS/.libs/plugin.so"
[ -f "$plugin" ] || bail "no $plugin"
prog="$MF_TESTS/prog_report"
odd=$(printf '%s/lib\033[7mX\nY.so' "$mf_work")
cp "$plugin" "$odd" || bail "cannot copy the plugin"
got=$(profile_within 20 "$prog" names "$odd"); rc=$?
is "$rc:$got" "0:names: 3 threads, 10 plugin calls" "threads with odd names and a library with an odd file name: exits 0"
rm -f "$odd" # its frames are printed with its file name
# clean DESC ARGS...: mf_print ARGS prints no control character but newlines, on either stream
clean() {
	desc=$1; shift
	"$MF_PRINT" "$@" "$mf_work"/malloc_freq.* > "$mf_work/out" 2> "$mf_work/err"
	n=$(cat "$mf_work/out" "$mf_work/err" | LC_ALL=C grep -c '[[:cntrl:]]')
	is "$n" 0 "$desc: no control character in the output or the warnings"
}
clean "the tree" --threshold 0
clean "the tree, callers first" --threshold 0 --caller
clean "--collapsed" --collapsed
clean "--collapsed --lines" --collapsed --lines
clean "--threads" --threads --threshold 0
header=$(sed -n '/  \(pid\/\)\{0,1\}tid$/{n;p;}' "$mf_work/out")
like "$header" 'thread name / allocation site$' "--threads: the thread names stay on the header's second line"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
is "$(grep -cv ' [0-9][0-9]*$' "$mf_work/c.txt")" 0 "--collapsed: every line still ends in its count"
is "$(calls "$mf_work/c.txt" ';site_named;malloc$')" 300 "... and the named threads' 300 calls are there"

rm -rf "$mf_work"/malloc_freq.*
got=$(profile_within 20 "$prog" huge); rc=$?
is "$rc:$got" "0:huge: 4 calls of SIZE_MAX / 2 bytes, 1 of 100" "requests of SIZE_MAX / 2 bytes: exits 0"
# honest LINE: the byte count on LINE is at least 2^65 (the true sum), or at least 2^64 and
# the line says it is held at a maximum
honest() {
	printf '%s\n' "$1" | awk '{
		v = -1
		for (i = 2; i <= NF; i++) {
			u = $i; sub(/[,;].*/, "", u)
			k = u == "B" ? 0 : u == "KiB" ? 1 : u == "MiB" ? 2 : u == "GiB" ? 3 : u == "TiB" ? 4 : u == "PiB" ? 5 : u == "EiB" ? 6 : u == "ZiB" ? 7 : -1
			x = $(i - 1); gsub(/[^0-9.]/, "", x)
			if (k >= 0 && x != "") { v = x * 2 ^ (10 * k); break }
		}
		said = $0 ~ /at least|more than|or more|>=|>|≥|saturat/
		exit !(v >= 2 ^ 65 * 0.99 || (v >= 2 ^ 64 * 0.99 && said))
	}'
}
report=$("$MF_PRINT" --threshold 0 "$mf_work"/malloc_freq.* 2> /dev/null)
line=$(printf '%s\n' "$report" | head -1)
honest "$line"; ok $? "the summary's bytes requested do not wrap round 2^64: '$line'"
line=$(printf '%s\n' "$report" | grep -m1 'site_huge')
honest "$line"; ok $? "the tree's line of site_huge neither: '$line'"
"$MF_PRINT" --collapsed --bytes "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
b=$(sed -n 's/.*;site_huge;malloc \([0-9]*\)$/\1/p' "$mf_work/c.txt")
# (compared as strings: past 2^53 awk and the shell lose digits)
[ ${#b} -gt 20 ] || { [ ${#b} = 20 ] && [ "$b" \> 18446744073709551614 ]; }
ok $? "--collapsed --bytes: site_huge's bytes are held at 2^64 - 1 or more, not wrapped ($b)"
if py=$(command -v python3); then
	got=$("$MF_PRINT" --json "$mf_work"/malloc_freq.* 2> /dev/null | "$py" -c 'import json, sys
s = json.load(sys.stdin)["summary"]
print(s["saturated"], s["total"]["bytes"] == 2**64 - 1)')
	is "$got" "True True" "--json: the bytes held at 2^64 - 1, and saturated, as the summary's text says"
else
	skip "python3 is not installed: --json not parsed"
fi
done_testing
