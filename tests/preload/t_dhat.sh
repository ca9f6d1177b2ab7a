#!/bin/sh
# Lifetimes against Valgrind's DHAT, on tests/progs/prog_life.c (4 threads, counts known by
# construction): per call site, the blocks allocated (DHAT's tbk; ours, the calls), live at
# the process's peak (gbk; our peak-blocks) and at the end (ebk; our leaked-blocks) agree, and
# the most live at once (mbk, mb; our max-live-blocks, max-live) as far as DHAT measures it,
# DHAT's JSON read by python3's json module. The differences, each explained and checked:
#   - DHAT charges a block that realloc moves or resizes to the call that first allocated it
#     (site_chain's malloc), we to the realloc's own stack (site_grow): site_chain's DHAT
#     figures are our site_chain's and site_grow's together;
#   - realloc(p, 0) allocates nothing: DHAT has no program point for site_shrink_call, we
#     count its calls (the requests) but no block of it is ever live.
# The most live at once: DHAT's "max" (mbk, mb) of a program point is what it held when one of
# its own allocations last made a new maximum of the process's live bytes, a moment of it; ours
# (max-live-blocks, max-live) is each thread's own maximum, summed over the threads: never
# less than DHAT's, and equal where the program point's maximum is such a moment (site_peak's
# blocks, all live at the process's peak; on tests/progs/prog_life_max.c, site_rounds's).
. "$srcdir/tests/tap.sh"
command -v valgrind > /dev/null || skip_all "valgrind is not installed (apt-get install valgrind)"
# (valgrind here runs this machine's programs, not another processor's)
[ "$mf_arch" = "$(uname -m)" ] || skip_all "valgrind runs $(uname -m)'s programs, these are $mf_arch's"
command -v python3 > /dev/null || skip_all "python3 is not installed (it reads DHAT's JSON)"
args="100 30 20 5 0 0 4"
MALLOC_FREQ_LIFETIMES=1 profile "$MF_TESTS/prog_life" $args; rc=$?
is "$rc" 0 "prog_life $args runs with lifetimes"
within 600 valgrind --tool=dhat --dhat-out-file="$mf_work/dhat.json" "$MF_TESTS/prog_life" $args > /dev/null 2>&1
ok $? "... and under valgrind --tool=dhat"
# DHAT's figures per site: "site tbk gbk ebk", summed over its program points (a program
# point is charged to the innermost site_* frame of its stack)
# dhat_sites JSON: "site tbk gbk ebk mbk mb" per site
dhat_sites() {
	python3 - "$1" << 'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
if d.get("dhatFileVersion") == 1:  # (Valgrind before 3.17: aps, and fbk for ebk)
    d["pps"] = [dict(pp, ebk=pp["fbk"]) for pp in d["aps"]]
sites = {}
for pp in d["pps"]:
    for f in pp["fs"]:
        m = re.search(r": (site_\w+) ", d["ftbl"][f])
        if m:
            s = sites.setdefault(m.group(1), [0, 0, 0, 0, 0])
            for i, k in enumerate(("tbk", "gbk", "ebk", "mbk", "mb")):
                s[i] += pp[k]
            break
for name, v in sorted(sites.items()):
    print(name, *v)
PY
}
dhat_sites "$mf_work/dhat.json" > "$mf_work/dhat.txt"
ok $? "python3 reads DHAT's profile"
d="$mf_work"/malloc_freq.*
"$MF_PRINT" --collapsed $d > "$mf_work/calls" && "$MF_PRINT" --collapsed --weight peak-blocks $d > "$mf_work/peak" &&
	"$MF_PRINT" --collapsed --weight leaked-blocks $d > "$mf_work/end"
ok $? "mf_print reads ours"
# ours SITE...: "tbk gbk ebk" of ours, summed over the sites
ours() {
	t=0 g=0 e=0
	for s in "$@"; do
		t=$((t + $(calls "$mf_work/calls" ";$s;[a-z_]*\$"))) g=$((g + $(calls "$mf_work/peak" ";$s;[a-z_]*\$")))
		e=$((e + $(calls "$mf_work/end" ";$s;[a-z_]*\$")))
	done
	echo "$t $g $e"
}
dhat() { awk -v s="$1" '$1 == s { print $2, $3, $4; f = 1 } END { if (!f) print "none" }' "$mf_work/dhat.txt"; }
# most SITE: "mbk mb" of ours (max-live-blocks, max-live), of DHAT's (dmost SITE)
"$MF_PRINT" --collapsed --weight max-live-blocks $d > "$mf_work/mbk" &&
	"$MF_PRINT" --collapsed --weight max-live $d > "$mf_work/mb"
ok $? "mf_print reads our most live at once"
most() { echo "$(calls "$mf_work/mbk" ";$1;[a-z_]*\$") $(calls "$mf_work/mb" ";$1;[a-z_]*\$")"; }
dmost() { awk -v s="$1" '$1 == s { print $5, $6; f = 1 } END { if (!f) print "none" }' "$mf_work/dhat.txt"; }
for s in site_temp site_kept site_zero site_aligned site_sizes site_shrink site_peak; do
	is "$(ours $s)" "$(dhat $s)" "$s: blocks, at the peak, at the end as DHAT counts them ($(dhat $s))"
done
is "$(ours site_chain site_grow)" "$(dhat site_chain)" "site_chain: DHAT's figures are our site_chain's and site_grow's (realloc'd blocks stay its)"
is "$(dhat site_grow) $(dhat site_shrink_call)" "none none" "DHAT has no program point of its own for the reallocs"
is "$(ours site_shrink_call | cut -d' ' -f2-)" "0 0" "realloc(p, 0): no block of it live at the peak or the end"
is "$(most site_peak)" "$(dmost site_peak)" "site_peak: the most live at once, blocks and bytes, as DHAT's max ($(dmost site_peak))"
for s in site_temp site_kept site_zero site_aligned site_sizes; do
	set -- $(most $s) $(dmost $s)
	[ "$#" = 4 ] && [ "$1" -ge "$3" ]
	ok $? "$s: our most blocks live at once ($1) are no fewer than DHAT's max of a moment (${3:-none})"
done

# tests/progs/prog_life_max.c, one thread allocating: site_rounds's most live is DHAT's max
args="20 1024 2 1 100 30"
rm -rf "$mf_work"/malloc_freq.*
MALLOC_FREQ_LIFETIMES=1 profile "$MF_TESTS/prog_life_max" $args
is "$?" 0 "prog_life_max $args runs with lifetimes"
within 600 valgrind --tool=dhat --dhat-out-file="$mf_work/dhat2.json" "$MF_TESTS/prog_life_max" $args > /dev/null 2>&1
ok $? "... and under valgrind --tool=dhat"
dhat_sites "$mf_work/dhat2.json" > "$mf_work/dhat.txt"
d="$mf_work"/malloc_freq.*
"$MF_PRINT" --collapsed --weight max-live-blocks $d > "$mf_work/mbk" &&
	"$MF_PRINT" --collapsed --weight max-live $d > "$mf_work/mb"
is "$(most site_rounds)" "$(dmost site_rounds)" "site_rounds: 20 blocks, 20 KiB at most, as DHAT's max ($(dmost site_rounds))"
for s in site_slow site_quick site_handed; do
	set -- $(most $s) $(dmost $s)
	[ "$#" = 4 ] && [ "$1" -ge "$3" ] && [ "$2" -ge "$4" ]
	ok $? "$s: ours ($1 $2) no less than DHAT's max of a moment (${3:-none} ${4:-})"
done
done_testing
