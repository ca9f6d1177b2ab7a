#!/bin/sh
# mf_print --pprof read by go tool pprof: totals equal the text report's, each site's calls
# and bytes are those prog_outputs makes, inlined frames are lines of one location, the
# mapping names the program and its build-id, the thread labels select threads (-tagfocus),
# -base diffs two runs, and a sampled run carries its estimates.
. "$srcdir/tests/tap.sh"
command -v go > /dev/null 2>&1 || skip_all "no go (go tool pprof): apt-get install golang-go"
go tool pprof -h > /dev/null 2>&1 || skip_all "go tool pprof does not run"
export PPROF_TMPDIR="$mf_work" HOME="$mf_work" GOCACHE="$mf_work/gocache"
prog="$MF_TESTS/prog_outputs"
mkdir "$mf_work/base" "$mf_work/new" "$mf_work/sampled"
MALLOC_FREQ_DIR="$mf_work/base" LD_PRELOAD="$MF_LIB" "$prog" base || bail "prog_outputs base failed"
MALLOC_FREQ_DIR="$mf_work/new" LD_PRELOAD="$MF_LIB" "$prog" new || bail "prog_outputs new failed"
base=$(ls -d "$mf_work"/base/malloc_freq.*) && new=$(ls -d "$mf_work"/new/malloc_freq.*) ||
	bail "no profile directories"
pid=${base##*.}

"$MF_PRINT" --pprof "$mf_work/base.pb.gz" "$base" > "$mf_work/text" 2> "$mf_work/err"
is "$?" 0 "--pprof FILE exits 0"
is "$(od -An -tx1 -N2 "$mf_work/base.pb.gz" | tr -d ' ')" 1f8b "the file is gzipped"
like "$(head -1 "$mf_work/text")" '^malloc_freq: [0-9]+ calls' "the text report is still printed"
"$MF_PRINT" --pprof - "$base" > "$mf_work/stdout.pb.gz" 2> /dev/null
cmp -s "$mf_work/stdout.pb.gz" "$mf_work/base.pb.gz"; ok $? "--pprof - writes the same profile to stdout, alone"
"$MF_PRINT" --pprof "$mf_work/nodir/x.pb.gz" "$base" > /dev/null 2> "$mf_work/err"; rc=$?
like "$rc $(cat "$mf_work/err")" "^1 mf_print: $mf_work/nodir/x.pb.gz: No such file or directory" \
	"a file that cannot be made is named, exit 1"

pp() { go tool pprof "$@" 2> "$mf_work/pprof.err"; }
calls=$(head -1 "$mf_work/text" | awk '{ print $2 }')
bytes=$("$MF_PRINT" --collapsed --bytes "$base" 2> /dev/null | awk '{ s += $NF } END { printf "%.0f\n", s }')
# raw FILE INDEX: the sum of column INDEX of go tool pprof -raw's samples
raw() { pp -raw "$1" | awk -v k="$2" '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
	on && $1 ~ /^-?[0-9]+$/ { v = k == 1 ? $1 : $2; sub(/:$/, "", v); s += v } END { printf "%.0f\n", s }'; }
is "$(raw "$mf_work/base.pb.gz" 1)" "$calls" "-raw: the samples' alloc_calls add up to the text report's $calls calls"
is "$(raw "$mf_work/base.pb.gz" 2)" "$bytes" "-raw: their alloc_space adds up to --collapsed --bytes's $bytes bytes"

pp -top -nodecount=1000 -nodefraction=0 -edgefraction=0 "$mf_work/base.pb.gz" > "$mf_work/top"
is "$?" 0 "go tool pprof -top reads it"
like "$(cat "$mf_work/top")" "Type: alloc_calls" "the default sample type is alloc_calls"
like "$(grep '^File:' "$mf_work/top")" "^File: prog_outputs\$" "the main mapping is the program's (pprof's File: line)"
like "$(cat "$mf_work/top")" "Total samples = $calls *\$" "-top: its total is the text report's"
# cum FILE FUNCTION: the cumulative value -top gives FUNCTION
cum() { awk -v f="$2" '$6 == f { print $4; exit }' "$1"; }
got=""
for s in site_main site_a site_b site_shared site_gone alloc_inl; do got="$got $s=$(cum "$mf_work/top" $s)"; done
is "$got" " site_main=100 site_a=200 site_b=300 site_shared=100 site_gone=40 alloc_inl=200" \
	"-top: each site's calls are the program's"
like "$(grep -w alloc_inl "$mf_work/top")" "alloc_inl \(inline\)" "the inlined function is shown inlined"
pp -raw "$mf_work/base.pb.gz" > "$mf_work/raw"
like "$(grep -A1 ' alloc_inl ' "$mf_work/raw")" "alloc_inl .*prog_outputs.c:[0-9]+.*
 +site_a .*prog_outputs.c:[0-9]+" "alloc_inl and site_a are two lines of one location, innermost first, with files and lines"
id=$(readelf -n "$prog" | sed -n 's/.*Build ID: *//p')
like "$(sed -n '/^Mappings/,$p' "$mf_work/raw")" " $prog $id " "a mapping names the program and its build-id"
pp -traces "$mf_work/base.pb.gz" > "$mf_work/traces"
like "$(grep -A2 '^ *300 *calloc$' "$mf_work/traces" | tr -s ' \n' ' ')" "300 calloc site_b worker_b" \
	"-traces: site_b's 300 calls of calloc, with their callers"
like "$(grep -B4 '^ *300 *calloc$' "$mf_work/traces" | tr -s ' \n' ' ')" "thread_name: worker_b" \
	"-traces: ... labelled with their thread's name"

pp -tree -nodefraction=0 "$mf_work/base.pb.gz" > "$mf_work/tree"
like "$(grep -A1 '| site_b$' "$mf_work/tree" | tr -s ' \n' ' ')" " 300 40.[0-9]+% \| site_b 300 100% \| calloc" \
	"-tree: site_b's node shows its 300 calls going to calloc"
pp -top -sample_index=alloc_space -unit=B -nodecount=1000 -nodefraction=0 "$mf_work/base.pb.gz" > "$mf_work/top"
like "$(cat "$mf_work/top")" "Total samples = ${bytes}B" "-sample_index=alloc_space: the total is the bytes requested"
is "$(cum "$mf_work/top" site_b) $(cum "$mf_work/top" site_a)" "300000B 20000B" \
	"-sample_index=alloc_space: site_b 300 x 1000 bytes, site_a 200 x 100"

# focused FILE ARGS: the total pprof shows after a filter
focused() { f=$1; shift; pp -top "$@" "$f" | sed -n 's/^Showing nodes accounting for \([-0-9]*\),.*/\1/p'; }
is "$(focused "$mf_work/base.pb.gz" -tagfocus=thread_name=worker_a)" 250 \
	"-tagfocus=thread_name=worker_a: its 200 + 50 calls"
is "$(focused "$mf_work/base.pb.gz" -tagfocus=thread_name=worker_b)" 350 \
	"-tagfocus=thread_name=worker_b: its 300 + 50 calls"
pp -top -nodecount=1000 -tagfocus=thread_id=$pid "$mf_work/base.pb.gz" > "$mf_work/top"
is "$(cum "$mf_work/top" site_main):$(cum "$mf_work/top" site_a)" "100:" \
	"-tagfocus=thread_id=PID: the main thread's site_main, none of worker_a's site_a"
is "$(focused "$mf_work/base.pb.gz" -tagfocus=pid=$pid)" "$calls" "-tagfocus=pid=PID: every call"
is "$(focused "$mf_work/base.pb.gz" -tagfocus=program=prog_outputs)" "$calls" "-tagfocus=program=prog_outputs: every call"

"$MF_PRINT" --pprof "$mf_work/new.pb.gz" "$new" > /dev/null 2>&1
pp -top -nodecount=1000 -nodefraction=0 -base "$mf_work/base.pb.gz" "$mf_work/new.pb.gz" > "$mf_work/top"
is "$?" 0 "-base: pprof diffs two runs"
got=""
for s in site_a site_new site_gone site_b; do got="$got $s=$(cum "$mf_work/top" $s)"; done
like "$got" "^ site_a=50 site_new=70 site_gone=-40 site_b=(0|)$" \
	"-base: site_a +50, site_new +70, site_gone -40, site_b unchanged"

MALLOC_FREQ_SAMPLE=10 MALLOC_FREQ_DIR="$mf_work/sampled" LD_PRELOAD="$MF_LIB" "$prog" base ||
	bail "prog_outputs sampled failed"
sampled=$(ls -d "$mf_work"/sampled/malloc_freq.*)
"$MF_PRINT" --pprof "$mf_work/sampled.pb.gz" "$sampled" > "$mf_work/text" 2> /dev/null
est=$(head -1 "$mf_work/text" | awk '{ print $2 }')
like "$est" '^~[0-9]+$' "a sampled run: the text report gives an estimate ($est)"
is "$(raw "$mf_work/sampled.pb.gz" 1)" "${est#\~}" "... and the profile's samples add up to the same estimate"
pp -raw "$mf_work/sampled.pb.gz" > "$mf_work/raw"
like "$(cat "$mf_work/raw")" "sample_rate:\[10( count)?\]" "... each sample labelled with its sampling rate"
like "$(cat "$mf_work/raw")" "estimates: sampled threads' counts are scaled" "... and a comment says the counts are estimates"
like "$(cat "$mf_work/raw")" "Period: 10" "... and the period is the rate"
done_testing
