#!/bin/sh
# mf_print --dot rendered by Graphviz (dot -Tsvg): every node and edge drawn, each function's
# self and total calls those of prog_outputs, edges with the calls made through them, the
# threshold leaving out what is below it, and the larger self share the redder fill.
. "$srcdir/tests/tap.sh"
command -v dot > /dev/null 2>&1 || skip_all "no dot (Graphviz): apt-get install graphviz"
prog="$MF_TESTS/prog_outputs"
MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$prog" base || bail "prog_outputs failed"
dir=$(ls -d "$mf_work"/malloc_freq.*)
"$MF_PRINT" --dot --threshold 0 "$dir" > "$mf_work/all.dot" 2> /dev/null
is "$?" 0 "--dot exits 0"
dot -Tsvg "$mf_work/all.dot" > "$mf_work/all.svg" 2> "$mf_work/err"
is "$?:$(cat "$mf_work/err")" "0:" "dot -Tsvg renders it without a word"
nodes=$(grep -c '^  n[0-9]* \[label=' "$mf_work/all.dot")
edges=$(grep -c '^  n[0-9]* -> n[0-9]* ' "$mf_work/all.dot")
is "$(grep -c 'class="node"' "$mf_work/all.svg") $(grep -c 'class="edge"' "$mf_work/all.svg")" "$nodes $edges" \
	"the SVG has every node ($nodes) and edge ($edges) of the graph"
# node FUNCTION: its label's lines after the name, joined by '|'
node() { sed -n "s/^  n[0-9]* \[label=\"$1\\\\n\([^\"]*\)\".*/\1/p" "$mf_work/all.dot" | sed 's/\\n/|/g'; }
is "$(node site_b)" "self: 300 calls (40.5%), 293.0 KiB|temporary: 300|total: 300 calls (40.5%), 293.0 KiB|temporary: 300" \
	"site_b: 300 calls of 1000 bytes, all its own, each freed at once (a temporary)"
like "$(node worker_a)" "^self: 0 calls .*\|total: 250 calls " "worker_a: none of its own, 250 under it"
like "$(node alloc_inl)" "^self: 200 calls " "alloc_inl, inlined into site_a, is a function of its own with its 200 calls"
like "$(node site_gone)" "^self: 40 calls " "site_gone: 40 calls"
calls=$("$MF_PRINT" "$dir" 2> /dev/null | head -1 | awk '{ print $2 }')
like "$(node malloc) $(node calloc)" "^([0-9]+) calls .* ([0-9]+) calls " "the allocation functions are nodes with their calls"
sum=$(printf '%s\n%s\n' "$(node malloc)" "$(node calloc)" | awk '{ s += $1 } END { print s }')
is "$sum" "$calls" "... adding up to the text report's $calls calls"
# edge FROM TO: the label of the edge between two functions
# (an allocation function's node comes after a function's of the same name, as the loader's
# inlined calloc where its debug info is installed: the last of that name)
edge() {
	a=$(sed -n "s/^  \(n[0-9]*\) \[label=\"$1\\\\n.*/\1/p" "$mf_work/all.dot" | tail -1)
	b=$(sed -n "s/^  \(n[0-9]*\) \[label=\"$2\\\\n.*/\1/p" "$mf_work/all.dot" | tail -1)
	sed -n "s/^  $a -> $b \[label=\"\([^\"]*\)\".*/\1/p" "$mf_work/all.dot"
}
is "$(edge worker_a site_shared) $(edge worker_b site_shared) $(edge site_a alloc_inl) $(edge site_b calloc)" \
	"50 50 200 300" "edges carry the calls made through them"
# red FUNCTION: the saturation of its fill
red() { sed -n "s/^  n[0-9]* \[label=\"$1\\\\n.*fillcolor=\"0.000 \([0-9.]*\) 1.000\".*/\1/p" "$mf_work/all.dot"; }
awk -v a="$(red site_b)" -v b="$(red alloc_inl)" -v c="$(red site_main)" -v d="$(red main)" \
	'BEGIN { exit !(a > b && b > c && c > d && d == 0) }'
ok $? "the fill is the redder the larger the self share: site_b $(red site_b) > alloc_inl $(red alloc_inl) > site_main $(red site_main) > main $(red main)"

"$MF_PRINT" --dot --threshold 10 "$dir" > "$mf_work/ten.dot" 2> /dev/null
dot -Tsvg "$mf_work/ten.dot" > "$mf_work/ten.svg" 2> /dev/null
ok $? "--threshold 10: dot renders it"
has() { grep -c "\[label=\"$1\\\\n" "$2"; }
is "$(has site_gone "$mf_work/ten.dot") $(has site_main "$mf_work/ten.dot") $(has allocate_dtv "$mf_work/ten.dot")" "0 1 0" \
	"--threshold 10: site_gone (40 of $calls calls) and the thread start's calloc are left out, site_main (100) stays"
n=$(grep -c '^  n[0-9]* \[label=' "$mf_work/ten.dot")
is "$(grep -c 'class="node"' "$mf_work/ten.svg")" "$n" "... and the SVG draws the $n nodes left"
left=$(awk '/ -> / { split($0, a, "\""); if (a[2] + 0 < 74.1) n++ } END { print n + 0 }' "$mf_work/ten.dot")
is "$left" 0 "... and no edge below 10% of the calls"
"$MF_PRINT" --dot --sort bytes --threshold 0 "$dir" > "$mf_work/bytes.dot" 2> /dev/null
like "$(grep -c ' -> ' "$mf_work/bytes.dot") $(cat "$mf_work/bytes.dot")" "nodes and edges below 0% of all bytes" "--sort bytes: the graph is of bytes"

# --sort temporary --threshold 0: every function of the text tree's, those of no temporary too
# (the loader's calloc of the thread start's TLS, kept to the end)
"$MF_PRINT" --sort temporary --threshold 0 "$dir" 2> /dev/null | sed -n '/call stack (allocation <- caller)$/,$p' |
	sed -n -E '2,$s/^ *[0-9]+ +[0-9.]+% +[^ ]+ [A-Za-z]+ +([0-9.]+%|-)  [|` -]*([^ ]+).*/\2/p' | sort -u > "$mf_work/text_fns"
"$MF_PRINT" --dot --sort temporary --threshold 0 "$dir" 2> /dev/null |
	sed -n 's/^  n[0-9]* \[label="\([^\\"]*\).*/\1/p' | sort -u > "$mf_work/dot_fns"
zero=$("$MF_PRINT" --sort temporary --threshold 0 "$dir" 2> /dev/null | grep -c '^ *[0-9]* *0\.00% ')
[ "$zero" -ge 1 ] && [ -s "$mf_work/text_fns" ]; ok $? "the text tree by temporaries at threshold 0 has lines of none ($zero)"
is "$(tr '\n' ' ' < "$mf_work/dot_fns")" "$(tr '\n' ' ' < "$mf_work/text_fns")" "--dot --sort temporary --threshold 0: the text tree's functions, every one"

# A function named like an allocation function (prog_samename's own static calloc, 20 calls of
# malloc under it; glibc's loader inlines one too) is a node apart from the real calloc (30
# calls): merged by name, the two were one allocation function's node of 50 calls.
mkdir "$mf_work/same"
MALLOC_FREQ_DIR="$mf_work/same" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_samename" || bail "prog_samename failed"
"$MF_PRINT" --dot --threshold 0 "$mf_work/same" > "$mf_work/same.dot" 2> /dev/null
got=$(sed -n 's/^  n[0-9]* \[label="calloc\\n\([a-z: ]*[0-9]* calls\).*/\1/p' "$mf_work/same.dot" | sort | tr '\n' '|')
is "$got" "30 calls|self: 20 calls|" "two calloc nodes: the allocation function's 30 calls, the program's function's own 20"
dot -Tsvg "$mf_work/same.dot" > "$mf_work/same.svg" 2> /dev/null
is "$?:$(grep -c '>calloc</text>' "$mf_work/same.svg")" "0:2" "dot -Tsvg draws both"
done_testing
