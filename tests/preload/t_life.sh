#!/bin/sh
# After malloc: every stack's size histogram and temporaries (blocks freed before their
# thread's next allocation), in 4 threads, each figure known by construction
# (tests/progs/prog_life.c); under sampling, a stack whose every block is a temporary has as many
# temporaries as calls. Then mf_print's options for them. With MALLOC_FREQ_LIFETIMES=1: the
# blocks each stack leaves live at exit, frees by another thread and after the allocating
# thread ended charged to the allocating stack, frees of blocks never seen counted; a fork
# and a raw fork with lifetimes on.
. "$srcdir/tests/tap.sh"
N=1000 M=300 Z=200 K=50 R=8 T=4
profile "$MF_TESTS/prog_life" $N $M $Z $K; rc=$?
is "$rc" 0 "prog_life runs under the profiler (exit 0)"
d="$mf_work"/malloc_freq.*
"$MF_PRINT" --collapsed $d > "$mf_work/calls"; ok $? "--collapsed reads the profile"
"$MF_PRINT" --collapsed --weight temporary $d > "$mf_work/temp"; ok $? "--weight temporary"
"$MF_PRINT" --collapsed --weight bytes $d > "$mf_work/bytes"; ok $? "--weight bytes"

# site CALLS TEMPORARIES BYTES: one site's three counts
site() {
	is "$(calls "$mf_work/calls" ";$1;[a-z_]*\$") $(calls "$mf_work/temp" ";$1;[a-z_]*\$") $(calls "$mf_work/bytes" ";$1;[a-z_]*\$")" "$2 $3 $4" \
		"$1: $2 calls, $3 temporaries, $4 bytes"
}
site site_temp $((T * N)) $((T * N)) $((T * N * 24))
site site_kept $((T * (M + 1))) 0 $((T * (M + 1) * 100))
site site_zero $((T * Z)) $((T * Z)) 0
site site_aligned $((T * N)) $((T * N)) $((T * N * 64))
site site_sizes $((T * 12 * M)) 0 $((T * M * 4095))
site site_chain $((T * K)) $((T * K)) $((T * K * 8))
site site_grow $((T * K * R)) $((T * K * (R - 1))) $((T * K * (16 + 32 + 64 + 128 + 256 + 512 + 1024 + 2048)))
site site_shrink $((T * K)) $((T * K)) $((T * K * 40))
site site_shrink_call $((T * K)) 0 0

# The summary's temporaries are the --weight temporary total.
total=$(awk '{ s += $NF } END { printf "%.0f", s }' "$mf_work/temp")
like "$("$MF_PRINT" $d)" "^  temporaries: $total of the calls \([0-9.]+%\) had their block freed before their thread's next allocation" \
	"the summary counts $total temporaries"

# The tree's temp column: the share of each line's calls.
"$MF_PRINT" -t 0 $d > "$mf_work/tree"
like "$(sed -n '/call stack/p' "$mf_work/tree")" "calls +% +bytes +temp  call stack" "the tree has a temp column"
like "$(grep -- '- site_grow ' "$mf_work/tree")" " 87\.5%  .*- site_grow " "site_grow: 87.5% temporaries (7 of each 8 reallocs)"
like "$(grep -- '- site_kept ' "$mf_work/tree")" "   0\.0%  .*- site_kept " "site_kept: 0.0% temporaries"

# --sort temporary orders and folds by temporaries: site_kept (0) is folded.
"$MF_PRINT" --sort temporary -t 2 $d > "$mf_work/sorted"
like "$(cat "$mf_work/sorted")" "paths below 2% of all temporaries are folded" "--sort temporary says so"
if grep -q -- '- site_kept ' "$mf_work/sorted"; then fail "--sort temporary folds site_kept"; else pass "--sort temporary folds site_kept"; fi
first=$(grep -m1 -- '- site_' "$mf_work/sorted")
like "$first" "site_(temp|aligned) " "--sort temporary: the first site has the most temporaries ($(echo $first | awk '{print $NF}'))"

# --histogram: each stack's buckets, exact.
"$MF_PRINT" --histogram -t 0 $d > "$mf_work/hist"; ok $? "--histogram"
# buckets SITE: the histogram lines of the stack through SITE, as "range count" pairs
buckets() {
	awk -v s="<- $1 " 'index($0, "<- ") && $1 ~ /^[0-9]+$/ { on = index($0, s) > 0; next }
		on && NF >= 3 { n = $(NF - 1); line = $0; sub(/^ */, "", line); sub(/  #.*/, "", line); printf "%s=%s;", line, n }' "$mf_work/hist"
}
is "$(buckets site_temp)" "[16 B, 32 B)=$((T * N));" "site_temp: all in [16 B, 32 B)"
is "$(buckets site_zero)" "0 B=$((T * Z));" "site_zero: all zero-byte requests"
is "$(buckets site_shrink_call)" "0 B=$((T * K));" "realloc(p, 0): a zero-byte request"
want=""
for r in "1 B, 2 B" "2 B, 4 B" "4 B, 8 B" "8 B, 16 B" "16 B, 32 B" "32 B, 64 B" "64 B, 128 B" "128 B, 256 B" "256 B, 512 B" "512 B, 1 KiB" "1 KiB, 2 KiB" "2 KiB, 4 KiB"; do
	want="$want[$r)=$((T * M));"
done
is "$(buckets site_sizes)" "$want" "site_sizes: 12 buckets of $((T * M)) (6 in the leaf's record, 6 in its dense histogram)"
want=""
for r in "16 B, 32 B" "32 B, 64 B" "64 B, 128 B" "128 B, 256 B" "256 B, 512 B" "512 B, 1 KiB" "1 KiB, 2 KiB" "2 KiB, 4 KiB"; do
	want="$want[$r)=$((T * K));"
done
is "$(buckets site_grow)" "$want" "site_grow: one bucket per realloc of the chain"

# Usage.
"$MF_PRINT" --sort nothing $d > /dev/null 2>&1
is $? 2 "--sort nothing: usage error"
"$MF_PRINT" --weight temporary $d > /dev/null 2>&1
is $? 2 "--weight without --collapsed: usage error"
"$MF_PRINT" --histogram --collapsed $d > /dev/null 2>&1
is $? 2 "--histogram with --collapsed: usage error"

# Sampled: the temporaries of sampled blocks, scaled like their calls.
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_SAMPLE=7 profile "$MF_TESTS/prog_life" 20000 300 200 50; rc=$?
is "$rc" 0 "prog_life runs sampled (MALLOC_FREQ_SAMPLE=7)"
"$MF_PRINT" --collapsed $d > "$mf_work/calls"
"$MF_PRINT" --collapsed --weight temporary $d > "$mf_work/temp"
c=$(calls "$mf_work/calls" ';site_temp;malloc$') t=$(calls "$mf_work/temp" ';site_temp;malloc$')
[ "$c" -gt 0 ] && [ "$c" = "$t" ]; ok $? "sampled: site_temp's temporaries are its calls ($t of ~$c)"
is "$(calls "$mf_work/temp" ';site_kept;malloc$')" 0 "sampled: site_kept has none"
# (site_sizes' blocks are freed after site_kept's call: when the countdown passed over that
# call, the last sampled block before it is still no temporary)
is "$(calls "$mf_work/temp" ';site_sizes;malloc$')" 0 "sampled: site_sizes has none"

# Lifetimes, with a fresh rule cache: the profiler loads libunwind, whose thread-local
# storage, made on a thread's first walk while the profiler runs, glibc frees at the thread's
# end or at its stack's next use.
rm -rf "$mf_work"/malloc_freq.* "$MALLOC_FREQ_CACHE"
Q=500 U=77 P=32
MALLOC_FREQ_LIFETIMES=1 profile "$MF_TESTS/prog_life" $N $M $Z $K $Q $U $P; rc=$?
is "$rc" 0 "prog_life runs with MALLOC_FREQ_LIFETIMES=1"
"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/lb"; ok $? "--weight leaked-blocks"
"$MF_PRINT" --collapsed --weight leaked $d > "$mf_work/lbytes"; ok $? "--weight leaked"
"$MF_PRINT" --collapsed $d > "$mf_work/calls"
"$MF_PRINT" --collapsed --weight temporary $d > "$mf_work/temp"
# two BLOCKS-FILE BYTES-FILE SITE BLOCKS BYTES DESC: a site's blocks and bytes, of two weights
two() {
	is "$(calls "$1" ";$3;[a-z_]*\$") $(calls "$2" ";$3;[a-z_]*\$")" "$4 $5" "$6"
}
leaked() { two "$mf_work/lb" "$mf_work/lbytes" "$1" "$2" "$3" "$1: $2 blocks ($3 bytes) leaked"; }
leaked site_kept $((T * (M + 1))) $((T * (M + 1) * 100))
leaked site_grow $((T * K)) $((T * K * 2048))
leaked site_queue 0 0
leaked site_orphan 0 0
leaked site_temp 0 0
leaked site_sizes 0 0
leaked site_chain 0 0
is "$(calls "$mf_work/calls" ';site_queue;malloc$') $(calls "$mf_work/calls" ';site_orphan;malloc$')" "$((T * Q)) $((T * Q))" \
	"site_queue and site_orphan: $((T * Q)) calls each, all freed: by the consumer thread, and by main after their threads ended"
site site_temp $((T * N)) $((T * N)) $((T * N * 24))
site site_grow $((T * K * R)) $((T * K * (R - 1))) $((T * K * (16 + 32 + 64 + 128 + 256 + 512 + 1024 + 2048)))
summary=$("$MF_PRINT" $d)
total=$(awk '{ s += $NF } END { printf "%.0f", s }' "$mf_work/lb")
like "$summary" "^  lifetimes: $total blocks \([0-9.]+ [KM]?i?B\) not freed at the end" "the summary counts $total leaked blocks"
# The profiler's own blocks (libunwind's storage above) are not frees of unknown blocks. Before
# glibc 2.34 the loader frees through free() a few blocks it allocated before the profiler
# could see them (a thread's dlerror state): frees of unknown blocks too there, at most one per
# thread start.
unknown=$(printf '%s\n' "$summary" | sed -n 's/.*; \([0-9]*\) frees\{0,1\} of \(a \)\{0,1\}blocks\{0,1\} never seen allocated$/\1/p')
glibc=$(getconf GNU_LIBC_VERSION 2> /dev/null | sed -n 's/^glibc 2\.\([0-9]*\).*/\1/p')
more=0
[ "${glibc:-0}" -ge 34 ] || more=$((T + 1))
[ "${unknown:-0}" -ge $U ] && [ "${unknown:-0}" -le $((U + more)) ]
ok $? "frees of unknown blocks: $unknown ($U by construction$([ $more = 0 ] || echo ", and up to $more of the loader's on glibc 2.${glibc:-?}"))"
# The peak: all 4 threads hold their site_peak blocks (8 MiB, by far the most), thread 0
# frees one while the others wait.
"$MF_PRINT" --collapsed --weight peak-blocks $d > "$mf_work/pb"; ok $? "--weight peak-blocks"
"$MF_PRINT" --collapsed --weight peak $d > "$mf_work/pbytes"; ok $? "--weight peak"
atpeak() { two "$mf_work/pb" "$mf_work/pbytes" "$1" "$2" "$3" "at the peak, $1 holds $2 blocks ($3 bytes)"; }
atpeak site_peak $((T * P)) $((T * P * 65536))
atpeak site_kept $((T * (M + 1))) $((T * (M + 1) * 100))
atpeak site_grow $((T * K)) $((T * K * 2048))
atpeak site_sizes 0 0
atpeak site_temp 0 0
atpeak site_queue 0 0
atpeak site_orphan 0 0
like "$summary" "^  peak: [0-9.]+ MiB live in [0-9]+ blocks, [0-9.]+ s after its start" "the summary says the peak and when"
"$MF_PRINT" --sort peak -t 5 $d > "$mf_work/bypeak"
like "$(grep -m1 -- '- site_' "$mf_work/bypeak")" "site_peak " "--sort peak: site_peak first"
# Lifetimes: every freed block in its stack's histogram; the orphans lived 60 ms at least.
h=$mf_work/hist
"$MF_PRINT" --histogram -t 0 $d > "$h"
is "$(sum "$(lives "$h" site_temp)") $(sum "$(lives "$h" site_queue)") $(sum "$(lives "$h" site_orphan)") $(sum "$(lives "$h" site_kept)")" \
	"$((T * N)) $((T * Q)) $((T * Q)) 0" "lifetime histograms: every freed block once (site_temp, site_queue, site_orphan), none of site_kept's"
short=$(lives "$h" site_orphan | tr ';' '\n' | grep -c ' \(ns\|us\)' )
like "$short $(lives "$h" site_orphan)" "^0 \[(33\.6|67\.1|134\.2|268\.4) ms" "site_orphan: every block lived 60 ms or more"
"$MF_PRINT" --leaks -t 0 $d > "$mf_work/leaks"; ok $? "--leaks"
first=$(awk 'on && NF { print; exit } /stack \(allocation/ { on = 1 }' "$mf_work/leaks")
like "$first" "<- site_grow " "--leaks: the most leaked bytes first (site_grow's chains)"
if grep -q "site_queue\|site_orphan\|site_temp" "$mf_work/leaks"; then fail "--leaks: no stack without leaks"; else pass "--leaks: no stack without leaks"; fi
like "$("$MF_PRINT" $d | sed -n '/call stack/p')" "temp +leaked blocks \\(bytes\\) +at peak \\(bytes\\) median life +max live \\(bytes\\) +mean life  call stack" "the tree has leaked, at-peak, median lifetime, max live and mean lifetime columns"
mkdir "$mf_work/old"
MALLOC_FREQ_DIR="$mf_work/old" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_life" 10 10 10 10
"$MF_PRINT" --leaks "$mf_work/old" > /dev/null 2> "$mf_work/err"; rc=$?
like "$rc $(cat "$mf_work/err")" "^1 mf_print: --leaks: these profiles have no lifetimes" "--leaks on a profile without lifetimes: a clear error"

# Fork and raw fork with lifetimes: the child's frees of the parent's blocks are the child's
# unknown ones, never written to the parent's files.
rm -rf "$mf_work"/malloc_freq.*
out=$(MALLOC_FREQ_LIFETIMES=1 profile "$MF_TESTS/prog_fork" 300 200); rc=$?
is "$rc" 0 "prog_fork with lifetimes exits 0"
"$MF_PRINT" $d > /dev/null 2>&1; ok $? "... and its profiles read"
for mode in sysfork clone; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_LIFETIMES=1 profile_within 20 "$MF_TESTS/prog_rawfork" $mode > /dev/null; rc=$?
	is "$rc" 0 "prog_rawfork $mode with lifetimes exits 0"
done
done_testing
