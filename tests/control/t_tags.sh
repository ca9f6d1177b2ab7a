#!/bin/sh
# Tag scopes (malloc_freq_tag_push, tests/progs/prog_tags.c): nested tags in 4 threads, counts per
# tag path exact in every report ([tag] frames outermost) and in --tags (total and self); the
# depth and name limits; tags with snapshots (--since) and with sampling; the tag label of
# --pprof's samples, read by go tool pprof.
. "$srcdir/tests/tap.sh"
k=100
profile_within 60 "$MF_TESTS/prog_tags" $k; is "$?" 0 "exits 0"
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --collapsed "$dir" > "$mf_work/c" 2> /dev/null; ok $? "mf_print reads it"
s=$((1 + 2 + 3 + 4))
is "$(calls "$mf_work/c" '^\[tag\] request;(clone3?|__clone|thread_start);.*;site_a;malloc$')" $((k * s)) "request > site_a: $((k * s))"
is "$(calls "$mf_work/c" '^\[tag\] request;\[tag\] parse;(clone3?|__clone|thread_start);.*;site_b;malloc$')" $((2 * k * s)) \
	"request > parse > site_b: $((2 * k * s))"
is "$(calls "$mf_work/c" '^\[tag\] request;\[tag\] render;(clone3?|__clone|thread_start);.*;site_c;malloc$')" $((3 * k * s)) \
	"request > render > site_c: $((3 * k * s))"
is "$(calls "$mf_work/c" '^(clone3?|__clone|thread_start);.*;site_d;malloc$')" $((4 * k)) "site_d outside any tag: $((4 * k))"
is "$(calls "$mf_work/c" '^\[tag\] late;_start;.*;site_e;malloc$')" $k "late > site_e: $k"
deep=$(grep ';site_deep;malloc ' "$mf_work/c")
is "$(echo "$deep" | grep -o '\[tag\] t[0-9]*' | tr '\n' ' ')" \
	"$(for i in $(seq 0 15); do printf '[tag] t%d ' $i; done)" "20 nested tags: the outer 16 kept"
is "$(calls "$mf_work/c" ';site_deep;malloc$')" 5 "and their 5 calls"
is "$(calls "$mf_work/c" "^\\[tag\\] $(printf 'x%.0s' $(seq 63));_start;.*;site_long;malloc\$")" 7 \
	"a 100-byte name cut to 63 bytes: its 7 calls"
is "$(calls "$mf_work/c" '^_start;.*;site_pop;malloc$')" 3 "a pop without a push does nothing"
# per thread: thread i made k*i calls at site_a
for tid in $(thread_tids "$dir"); do
	"$MF_PRINT" --collapsed --thread "$tid" "$dir" > "$mf_work/t" 2> /dev/null
	a=$(calls "$mf_work/t" '^\[tag\] request;.*;site_a;malloc$')
	b=$(calls "$mf_work/t" '^\[tag\] request;\[tag\] parse;.*;site_b;malloc$')
	[ "$a" -gt 0 ] && echo "$a $b" >> "$mf_work/per"
done
is "$(sort -n "$mf_work/per" | tr '\n' ' ')" \
	"$k $((2 * k)) $((2 * k)) $((4 * k)) $((3 * k)) $((6 * k)) $((4 * k)) $((8 * k)) " \
	"per thread: k*i at site_a and 2*k*i at site_b, i = 1..4"
"$MF_PRINT" --tags "$dir" > "$mf_work/tags" 2> /dev/null; ok $? "--tags: exits 0"
row() { awk -v t="$1" '$NF == t { print $1, $5; exit }' "$mf_work/tags"; } # (bytes: 2 fields)
is "$(row request)" "$((6 * k * s)) $((k * s))" "--tags: request, total and self"
is "$(row parse)" "$((2 * k * s)) $((2 * k * s))" "--tags: parse under request"
is "$(row render)" "$((3 * k * s)) $((3 * k * s))" "--tags: render under request"
like "$(cat "$mf_work/tags")" ' \|- render$' "--tags: render drawn under request, the busier first"
# with the snapshot taken after the threads: --since shows only what came later
"$MF_PRINT" --collapsed --since mid "$dir" > "$mf_work/since" 2> /dev/null
is "$(calls "$mf_work/since" '^\[tag\] request;')" 0 "--since mid: no request calls"
is "$(calls "$mf_work/since" '^\[tag\] late;.*;site_e;malloc$')" $k "--since mid: late's $k"
"$MF_PRINT" --collapsed --snapshot mid "$dir" > "$mf_work/mid" 2> /dev/null
is "$(calls "$mf_work/mid" '^\[tag\] request;\[tag\] parse;.*;site_b;malloc$')" $((2 * k * s)) \
	"--snapshot mid: parse's calls, exact"

# --diff with a window takes it in the base too: a profile against itself since "mid" has no
# change (the base was read whole, and the diff said most calls were gone)
"$MF_PRINT" --since mid --diff "$dir" "$dir" > "$mf_work/d" 2> /dev/null
like "$(sed -n 1p "$mf_work/d")" "^malloc_freq diff: ([0-9]+) -> \\1 calls \\(0\\)" "--since mid --diff DIR DIR: no change"
like "$(sed -n 3p "$mf_work/d")" "^  counts since snapshot mid \\(the base's alike\\)$" "... and the window is said"
# the machine outputs say the window too (only the text reports did)
"$MF_PRINT" --dot --since mid "$dir" > "$mf_work/w.dot" 2> /dev/null
like "$(sed -n 2p "$mf_work/w.dot")" "; counts since snapshot mid\", labelloc=t\];$" "--dot --since mid: the title says the window"
"$MF_PRINT" --html "$mf_work/w.html" --since mid "$dir" 2> /dev/null
is "$(grep -c '"window":"since snapshot mid"' "$mf_work/w.html")" 1 "--html --since mid: the page's data holds the window"
if command -v python3 > /dev/null 2>&1; then
	is "$("$MF_PRINT" --json --since mid "$dir" 2> /dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["window"])'):$("$MF_PRINT" --json "$dir" 2> /dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["window"])')" \
		"since snapshot mid:None" "--json: summary.window, null without one"
else
	skip "--json's window: no python3"
fi
if command -v go > /dev/null 2>&1; then
	"$MF_PRINT" --pprof "$mf_work/w.pb.gz" --since mid "$dir" > /dev/null 2>&1
	is "$(HOME="$mf_work" GOCACHE="$mf_work/gocache" PPROF_TMPDIR="$mf_work" go tool pprof -raw "$mf_work/w.pb.gz" 2> /dev/null | grep -c '^Comment: counts since snapshot mid$')" 1 \
		"--pprof --since mid: a comment says the window (go tool pprof)"
else
	skip "--pprof's window comment: no go (apt-get install golang-go)"
fi
# --json: a tag scope is a frame of kind "tag" named by the tag (the kind was read past the end
# of the table of kinds)
if command -v python3 > /dev/null 2>&1; then
	"$MF_PRINT" --json "$dir" > "$mf_work/j" 2> /dev/null
	is "$(python3 -c 'import json, sys
fr = json.load(open(sys.argv[1]))["frames"]
kinds = {f["kind"] for f in fr}
print(sorted(f["function"] for f in fr if f["kind"] == "tag")[:3], kinds <= {"code", "entry", "truncated", "jit", "tag"})' "$mf_work/j")" \
		"['late', 'parse', 'render'] True" "--json: tag frames of kind tag, named by their tags; no other kind"
else
	skip "--json's tag frames: no python3"
fi
# with sampling: estimates near the truth (k = 2000: 20,000 calls per tag path at least)
# pprof: each sample labelled with its tag path, for -tagfocus
if command -v go > /dev/null 2>&1; then
	"$MF_PRINT" --pprof "$mf_work/t.pb.gz" "$dir" > /dev/null 2>&1
	go tool pprof -raw -tagfocus='tag=^request/parse$' "$mf_work/t.pb.gz" > "$mf_work/raw" 2> /dev/null
	is "$(awk '/^Samples:/ { s = 1; next } s && /^ *[0-9]+( +[0-9]+)+:/ { n += $1 } /^Locations/ { s = 0 } END { print n + 0 }' "$mf_work/raw")" \
		$((2 * k * s)) "pprof: -tagfocus=tag=request/parse holds parse's $((2 * k * s)) calls"
else
	pass "pprof's tag label # SKIP no go (go tool pprof): apt-get install golang-go"
fi
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_SAMPLE=10 MALLOC_FREQ_SEED=7 profile_within 60 "$MF_TESTS/prog_tags" 2000; is "$?" 0 "sampled: exits 0"
"$MF_PRINT" --tags "$mf_work"/malloc_freq.* > "$mf_work/tags" 2> /dev/null
for x in request:$((6 * 2000 * s)) parse:$((2 * 2000 * s)) render:$((3 * 2000 * s)); do
	t=${x%%:*} want=${x#*:}
	got=$(row "$t" | cut -d' ' -f1)
	[ $((got * 100 / want)) -ge 90 ] && [ $((got * 100 / want)) -le 110 ]
	ok $? "sampled: $t about $want (got $got, within 10%)"
done
done_testing
