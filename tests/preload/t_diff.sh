#!/bin/sh
# mf_print --diff BASE between two runs of known different counts, the second of another build
# (its code at other addresses, so stacks can only match by name): site_a 200 -> 250 calls,
# site_gone 40 -> 0, site_new 0 -> 70, the rest unchanged. The text report lists the stacks by
# absolute change with signs and prints the signed tree; --collapsed gives difffolded.pl's two
# columns, which flamegraph.pl draws as a differential; --pprof carries the base negated.
. "$srcdir/tests/tap.sh"
prog="$MF_TESTS/prog_outputs"
shifted="$mf_work/prog_outputs_shifted"
$CC -O1 -g -fno-omit-frame-pointer -fno-builtin -pthread -DMF_SHIFTED -o "$shifted" \
	"$srcdir/tests/progs/prog_outputs.c" -lpthread || bail "cannot build prog_outputs -DMF_SHIFTED"
addr() { nm "$1" | awk '$3 == "site_a" { print $1 }'; }
[ -n "$(addr "$prog")" ] && [ "$(addr "$prog")" != "$(addr "$shifted")" ]
ok $? "the second build's site_a lies elsewhere ($(addr "$prog") and $(addr "$shifted"))"
mkdir "$mf_work/base" "$mf_work/new"
MALLOC_FREQ_DIR="$mf_work/base" LD_PRELOAD="$MF_LIB" "$prog" base || bail "prog_outputs base failed"
MALLOC_FREQ_DIR="$mf_work/new" LD_PRELOAD="$MF_LIB" "$shifted" new || bail "the other build failed"
base=$(ls -d "$mf_work"/base/malloc_freq.*) && new=$(ls -d "$mf_work"/new/malloc_freq.*) ||
	bail "no profile directories"
total() { "$MF_PRINT" "$1" 2> /dev/null | head -1 | awk '{ print $2 }'; }
b=$(total "$base") n=$(total "$new")

"$MF_PRINT" --diff "$base" "$new" > "$mf_work/out" 2> "$mf_work/err"
is "$?" 0 "--diff exits 0"
like "$(head -1 "$mf_work/out")" "^malloc_freq diff: $b -> $n calls \(\+$((n - b))\)" \
	"the totals: $b -> $n calls, +$((n - b)) (the text reports' totals)"
like "$(sed -n 3p "$mf_work/out")" "1 only in the base, 1 only in this profile" "one stack gone, one new, the others matched"
stacks=$(sed -n '/^Stacks by change/,/^$/d; /^ *calls .*stack/,/^$/p' "$mf_work/out" | sed -n '2,4p' |
	awk '{ printf "%s %s %s %s %s|", $1, $2 $3, $4, $5, $8 }')
is "$stacks" "+70 +2.2KiB 0 70 site_new|+50 +4.9KiB 200 250 alloc_inl|-40 -640B 40 0 site_gone|" \
	"the stacks by absolute change: site_new +70 (+70 x 32 B), site_a's +50 (+50 x 100 B), site_gone -40 (-40 x 16 B)"
is "$(sed -n '/^Stacks by change/,/^The change/p' "$mf_work/out" | grep -c 'site_b\|site_main\|site_shared')" 0 \
	"... and no unchanged stack"
tree=$(sed -n '/^The change as a tree/,$p' "$mf_work/out")
like "$(printf '%s\n' "$tree" | sed -n 4p)" "^ +\+80 .* 440 +520  malloc$" "the tree's root: malloc +80 (+70 +50 -40)"
like "$(printf '%s\n' "$tree" | grep -E ' (\|- |`- )site_')" "^ +\+70 .*\|- site_new
 +\+50 .*\|- alloc_inl
 +-40 .*\`- site_gone$" "under it, signed and largest change first: site_new, alloc_inl (site_a's), site_gone"
"$MF_PRINT" --diff "$base" --sort bytes --threshold 0 "$new" > "$mf_work/out" 2> /dev/null
is "$(sed -n '/^ *calls .*stack/,/^$/p' "$mf_work/out" | sed -n '2,4p' | awk '{ printf "%s ", $8 }')" \
	"alloc_inl site_new site_gone " "--sort bytes --threshold 0: by absolute change in bytes (+5000, +2240, -640)"
"$MF_PRINT" --diff "$base" --sort bytes "$new" > "$mf_work/out" 2> /dev/null
like "$(sed -n '/^ *calls .*stack/,/^$/p' "$mf_work/out" | sed -n '2,3p')" "alloc_inl .*
 +\([0-9]+ more stacks changed by less\)$" "--sort bytes: the changes below 1% of the bytes folded, site_a's +5000 B stays"

"$MF_PRINT" --collapsed --diff "$base" "$new" > "$mf_work/c.txt" 2> /dev/null
is "$(grep -cv '^[^ ]* [0-9][0-9]* [0-9][0-9]*$' "$mf_work/c.txt")" 0 "--collapsed --diff: every line is 'stack BASE NOW'"
is "$(awk '{ a += $2; b += $3 } END { print a, b }' "$mf_work/c.txt")" "$b $n" "... its columns add up to the two totals"
is "$(grep ';site_\(gone\|new\|a\);\|;site_a;alloc_inl;' "$mf_work/c.txt" | sed 's/.*;\(site_[a-z]*\);.* \([0-9]* [0-9]*\)$/\1 \2/' | sort | tr '\n' '|')" \
	"site_a 200 250|site_gone 40 0|site_new 0 70|" "... site_a 200 250, site_gone 40 0, site_new 0 70"
"$MF_PRINT" --collapsed --bytes --diff "$base" "$new" > "$mf_work/cb.txt" 2> /dev/null
bb=$("$MF_PRINT" --collapsed --bytes "$base" 2> /dev/null | awk '{ s += $NF } END { print s }')
nb=$("$MF_PRINT" --collapsed --bytes "$new" 2> /dev/null | awk '{ s += $NF } END { print s }')
is "$(awk '{ a += $2; b += $3 } END { print a, b }' "$mf_work/cb.txt")" "$bb $nb" "--collapsed --bytes --diff: the bytes of each"
fg=$(command -v flamegraph.pl || ls /usr/share/perl5/Devel/NYTProf/flamegraph.pl 2>/dev/null)
if [ -n "$fg" ]; then
	perl "$fg" "$mf_work/c.txt" > "$mf_work/d.svg" 2> "$mf_work/err"
	is "$?:$(cat "$mf_work/err")" "0:" "flamegraph.pl draws it as a differential"
	like "$(grep -o '<title>malloc ([^<]*</title>' "$mf_work/d.svg" | tr '\n' ' ')" \
		"malloc \(70 samples, [0-9.]+%; \+[0-9.]+%\)" "... the new site's malloc marked as grown"
else
	pass "# SKIP no flamegraph.pl"
	pass "# SKIP no flamegraph.pl"
fi

if command -v go > /dev/null 2>&1; then
	export PPROF_TMPDIR="$mf_work" HOME="$mf_work" GOCACHE="$mf_work/gocache"
	"$MF_PRINT" --pprof "$mf_work/d.pb.gz" --diff "$base" "$new" > /dev/null 2>&1
	go tool pprof -top -nodecount=1000 -nodefraction=0 "$mf_work/d.pb.gz" > "$mf_work/top" 2> /dev/null
	cum() { awk -v f="$1" '$6 == f { print $4; exit }' "$mf_work/top"; }
	like "$(cum site_a) $(cum site_new) $(cum site_gone) $(cum site_b)" "^50 70 -40 (0|)$" \
		"--pprof --diff: go tool pprof sees site_a +50, site_new +70, site_gone -40, site_b unchanged"
	like "$(cat "$mf_work/top")" "Showing nodes accounting for $((n - b)), " "... and the change of the total, +$((n - b))"
else
	pass "# SKIP no go (go tool pprof)"
	pass "# SKIP no go (go tool pprof)"
fi

"$MF_PRINT" --diff "$mf_work/nope" "$new" > /dev/null 2> "$mf_work/err"; rc=$?
like "$rc $(tail -1 "$mf_work/err")" "^1 mf_print: $mf_work/nope: .*no diff made" "a base that cannot be read: named, exit 1"
"$MF_PRINT" --json --diff "$base" "$new" > /dev/null 2> "$mf_work/err"; rc=$?
like "$rc $(head -1 "$mf_work/err")" "^2 mf_print: --diff goes with" "--diff with --json: a usage error"

# Against a sampled profile, a change within twice its sampling noise's standard deviation is
# marked (noise): one in 100 calls of prog_sample recorded, each site's estimate has a variance
# of about 99 times its count. The same work sampled: each marked as the rule says; twice the
# work: no change is noise.
mkdir "$mf_work/exact" "$mf_work/same" "$mf_work/twice"
MALLOC_FREQ_DIR="$mf_work/exact" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_sample" 1 20000
MALLOC_FREQ_DIR="$mf_work/same" MALLOC_FREQ_SAMPLE=100 MALLOC_FREQ_SEED=7 LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_sample" 1 20000
MALLOC_FREQ_DIR="$mf_work/twice" MALLOC_FREQ_SAMPLE=100 MALLOC_FREQ_SEED=7 LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_sample" 1 40000
"$MF_PRINT" --threshold 0 --diff "$mf_work/exact" "$mf_work/same" > "$mf_work/d1" 2> /dev/null
like "$(cat "$mf_work/d1")" "  estimates: this profile was sampled \(one call in 1 and in 100\); [0-9]+ of the changes are within" "--diff against a sampled profile says so"
# (rows: change, bytes change (two words), base, now, stack; "(noise)" when change^2 <= 4 * 99 * now)
bad=$(sed -n '/^Stacks by change/,/^The change as a tree/p' "$mf_work/d1" | awk '$1 ~ /^[+-][0-9]+$/ && $4 ~ /^[0-9]+$/ {
	d = $1 + 0; n = $5 + 0; marked = ($NF == "(noise)"); rows++
	if (marked != (d * d <= 4 * 99 * n)) bad++ } END { print rows + 0 ":" bad + 0 }')
[ "${bad#*:}" = 0 ] && [ "${bad%:*}" -ge 5 ]; ok $? "the same work sampled: each of the ${bad%:*} rows marked (noise) as the rule says (${bad#*:} not)"
"$MF_PRINT" --threshold 0 --diff "$mf_work/exact" "$mf_work/twice" > "$mf_work/d2" 2> /dev/null
is "$(grep -c '(noise)$' "$mf_work/d2")" 0 "twice the work sampled: no change marked as noise"
"$MF_PRINT" --threshold 0 --diff "$mf_work/exact" "$mf_work/exact" 2> /dev/null | grep -c 'estimates:' > "$mf_work/n"
is "$(cat "$mf_work/n")" 0 "two exact profiles: nothing said of estimates"
done_testing
