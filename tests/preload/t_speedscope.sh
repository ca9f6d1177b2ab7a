#!/bin/sh
# mf_print --pprof loaded into speedscope's own web app in headless Chromium, the way
# `speedscope FILE` loads it: the import succeeds, the default sample type (alloc_calls) is the
# one shown, each site's calls and bytes are those prog_outputs makes, and the leaves' self
# weights add up to the text report's calls. A truncated profile is rejected, visibly.
# speedscope comes from npm, cached in the build tree (tests/progs/.speedscope); SPEEDSCOPE_DIST may
# name a speedscope dist/release directory instead. Leaves tests/progs/t_speedscope.png behind.
. "$srcdir/tests/tap.sh"
version=1.25.0
cache="$MF_TESTS/.speedscope"
chrome=$(command -v chromium || command -v chromium-browser) ||
	skip_all "no chromium: apt-get install chromium"
dist=${SPEEDSCOPE_DIST:-$cache/node_modules/speedscope/dist/release}
if [ -z "$SPEEDSCOPE_DIST" ] &&
	! grep -qs "\"version\": \"$version\"" "$cache/node_modules/speedscope/package.json"; then
	command -v npm > /dev/null 2>&1 || skip_all "no npm to fetch speedscope: apt-get install npm"
	within 300 npm install --prefix "$cache" --no-audit --no-fund --no-save --fetch-retries=1 \
		"speedscope@$version" > "$mf_work/npm.log" 2>&1 ||
		skip_all "speedscope@$version could not be installed from npm (offline?):" \
			"$(grep -m1 -i 'err' "$mf_work/npm.log")"
fi
[ -f "$dist/index.html" ] || skip_all "no speedscope web app at $dist"

prog="$MF_TESTS/prog_outputs"
MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$prog" base || bail "prog_outputs failed"
dir=$(ls -d "$mf_work"/malloc_freq.*) || bail "no profile directory"
"$MF_PRINT" --pprof "$mf_work/calls.pb.gz" "$dir" > "$mf_work/text" 2> /dev/null ||
	bail "mf_print --pprof failed"
"$MF_PRINT" --pprof "$mf_work/bytes.pb.gz" --sort bytes "$dir" > /dev/null 2> /dev/null ||
	bail "mf_print --pprof --sort bytes failed"
head -c 300 "$mf_work/calls.pb.gz" > "$mf_work/truncated.pb.gz"
calls=$(head -1 "$mf_work/text" | awk '{ print $2 }')

# page NAME VIEW ARGS...: speedscope's page in VIEW after it loads $mf_work/NAME.pb.gz, given
# as `speedscope FILE` gives it (a script calling speedscope.loadFileFromBase64), in Chromium
# with ARGS (default: the DOM, one table row a line). An alert would block headless Chromium,
# so the script turns it into text on the page.
page() {
	f=$1 view=$2; shift 2
	{
		echo 'window.alert = function (m) { var p = document.createElement("pre");'
		echo '	p.textContent = "alert: " + m; document.body.appendChild(p); };'
		echo "speedscope.loadFileFromBase64(\"$f.pb.gz\", \"$(base64 -w0 "$mf_work/$f.pb.gz")\");"
	} > "$mf_work/$f.js"
	[ $# -gt 0 ] || set -- --window-size=1200,2000 --dump-dom
	within 120 "$chrome" --headless --no-sandbox --enable-unsafe-swiftshader \
		--user-data-dir="$mf_work/chromium" --no-first-run --virtual-time-budget=20000 "$@" \
		"file://$dist/index.html#localProfilePath=$mf_work/$f.js&view=$view" \
		2> "$mf_work/chromium.err" | sed 's/<tr/\n&/g; s/<\/tr>/&\n/g'
}
# row DOM FUNCTION: the sandwich view's "TOTAL|SELF" for FUNCTION (values without percentages)
row() {
	grep '^<tr' "$1" | sed 's/<[^>]*>/|/g; s/&lt;/</g; s/&gt;/>/g' | tr -s '|' |
		awk -F'|' -v f="$2" '$4 == f { sub(/ \(.*/, "", $2); sub(/ \(.*/, "", $3); print $2 "|" $3; exit }'
}

page calls sandwich > "$mf_work/calls.dom"
# (a fresh Chromium's first page has, once in CI, been dumped titled but before its table was
# drawn, while the machine was busy: once more then, and the checks below read that one)
grep -q '^<tr' "$mf_work/calls.dom" || page calls sandwich > "$mf_work/calls.dom"
like "$(grep -o '<title>[^<]*</title>' "$mf_work/calls.dom")" "<title>calls.pb.gz - speedscope</title>" \
	"speedscope imports the profile (the page is titled with its name)"
grep -q '<title>' "$mf_work/calls.dom" || tail -5 "$mf_work/chromium.err" | sed 's/^/# chromium: /'
is "$(grep -c 'alert: \|Something went wrong' "$mf_work/calls.dom")" 0 "... with no import error or alert"
got=""
for s in site_main site_a site_b site_shared site_gone worker_a worker_b; do
	got="$got $s=$(row "$mf_work/calls.dom" $s)"
done
is "$got" " site_main=100|0 site_a=200|0 site_b=300|0 site_shared=100|0 site_gone=40|0 worker_a=250|0 worker_b=350|0" \
	"each site's total calls are the program's, as plain counts (the default sample type, alloc_calls)"
grep '^<tr' "$mf_work/calls.dom" | sed 's/<[^>]*>/|/g' | tr -s '|' | awk -F'|' '{ print $4 }' > "$mf_work/names"
like "$(grep -c . "$mf_work/names") $(grep -cF '(unknown)' "$mf_work/names")" '^[1-9][0-9]* 0$' \
	"every frame has a function name (none is speedscope's '(unknown)')"
"$MF_PRINT" --collapsed "$dir" 2> /dev/null | awk '{ n = $NF; sub(/ [0-9]+$/, "");
	k = split($0, f, ";"); s[f[k]] += n } END { for (l in s) print l "=" s[l] "|" s[l] }' |
	sort > "$mf_work/leaves"
got=$(for l in $(sed 's/=.*//' "$mf_work/leaves"); do echo "$l=$(row "$mf_work/calls.dom" "$l")"; done)
is "$got" "$(cat "$mf_work/leaves")" "each leaf's total and self calls are --collapsed's calls ending in it"
sum=$(grep '^<tr' "$mf_work/calls.dom" | sed 's/<[^>]*>/|/g' | tr -s '|' |
	awk -F'|' '{ v = $3; sub(/ \(.*/, "", v); gsub(/,/, "", v); s += v } END { printf "%.0f\n", s }')
is "$sum" "$calls" "the self weights add up to the text report's $calls calls"

page bytes sandwich > "$mf_work/bytes.dom"
kb() { awk -v b="$1" 'BEGIN { printf "%.2f KB|0 B", b / 1024 }'; } # speedscope's bytes format
is "$(row "$mf_work/bytes.dom" site_b) $(row "$mf_work/bytes.dom" site_a)" "$(kb 300000) $(kb 20000)" \
	"--sort bytes: speedscope shows alloc_space, site_b 300 x 1000 bytes, site_a 200 x 100"

page truncated sandwich > "$mf_work/truncated.dom"
like "$(sed 's/<[^>]*>//g' "$mf_work/truncated.dom")" "alert: Unrecognized format" \
	"a truncated profile is rejected, and the check sees it"

rm -f "$MF_TESTS/t_speedscope.png"
page calls left-heavy --window-size=1200,800 --screenshot="$MF_TESTS/t_speedscope.png" > /dev/null
[ -s "$MF_TESTS/t_speedscope.png" ]
ok $? "a screenshot of the flame graph: tests/progs/t_speedscope.png"
done_testing
