#!/bin/sh
# Lifetimes against Valgrind's DHAT on two real programs: sqlite3 running a script (a table,
# 2000 rows, an index, queries) and python3 running a module of its standard library's work
# (a Counter, a dict, json both ways, re). Each runs once under DHAT and once under the
# profiler with MALLOC_FREQ_LIFETIMES=1; tests/progs/dhat_compare.py matches their program points
# (the stack below the allocation function, each frame a module and an offset: both
# programs are stripped, so names would not tell most frames apart) and counts, per point,
# the blocks allocated (DHAT's tbk; our calls), live at the peak (gbk; our peak-blocks) and
# live at the end (ebk; our leaked-blocks). Every point agrees, or differs for one of these
# reasons, each checked:
#   - realloc: DHAT charges a block realloc moves or resizes to the point that first
#     allocated it, counting the realloc as one more block there; we charge the new block to
#     the realloc's stack. Summed over the points realloc touched, the counts agree.
#   - the peak's moment: in a process with one thread (both of these) ours is exact, as
#     DHAT's is: each change goes into the process's sum at once (lib/life/life.c). sqlite3's
#     peak is DHAT's to the byte, with no point differing there; python3's may not be (its
#     addresses, below). With more threads ours is found within MF_LIFE_BATCH (64 KiB) of
#     live bytes per thread; so each program ends by holding 16 MB for a moment, far above
#     anything else: both peaks are in that moment, within 64 KiB, and the points whose
#     blocks at the peak differ changed by less than 64 KiB in all.
#     (Of equal maxima DHAT keeps the last, we the first: the 16 MB moment has none.)
#   - python3's addresses: its behaviour follows the addresses malloc returns, which differ
#     between valgrind's allocator and glibc's. Its type attribute cache is indexed by a name
#     string's address and keeps the last name it cached alive, so which of two such strings
#     is live at the peak differs (a few points, within the 64 KiB above); and an int made
#     from an address (a type's subclass list is keyed by them) is 28 or 32 bytes long (one
#     or two 30-bit digits) by its value: the points whose bytes differ differ by whole
#     digits. (json.dumps runs with check_circular=False: its markers are ints of ids.)
#   - glibc before 2.34: libdl keeps dlerror's state in a buffer a thread, allocated by the
#     thread's first dlopen or dlsym (_dlerror_run): in the main thread the profiler's own
#     dlsym at its start allocates it, not recorded, so the program's first dlopen allocates
#     nothing under the profiler (python3's: one block fewer, at one point at most; none
#     from 2.34 on, where libc holds dlerror's state).
# Both runs see the same environment: valgrind adds variables and its own LD_PRELOAD, so our
# run gets the same names and values, with the profiler's LD_PRELOAD path padded to the
# length of valgrind's (python3 keeps os.environ, whose strings' sizes follow the values);
# the python module prints each variable's name and length, and both runs' outputs must be
# the same. Both runs' standard streams are new files (valgrind writes its log to a file of
# its own, --log-file): python3 asks each stream's offset at its start, and on one not at 0
# its TextIOWrapper calls the encoder's setstate(0), Python code (codecs.py). With valgrind's
# log on python3's stderr, python3.9 did so under DHAT only: that call's frame, taken from
# the free list, stayed setstate's cached frame to the end, so the __main__ module's frame
# was a new block, not that one resized; and the offsets were ints above 256, allocated.
# The module prints the three offsets. It is alone in its directory (python3 lists its
# script's directory, a string per file). python3 runs with PYTHONMALLOC=malloc, so that
# every object is a malloc'd block (with pymalloc, objects of up to 512 bytes come from its
# arenas, which DHAT and we see only as 256 KiB blocks), and PYTHONHASHSEED=0 (the same dict
# and set orders in both). valgrind runs with --run-libc-freeres=no (glibc frees its own
# blocks at exit under valgrind only) and --num-callers=500 (MALLOC_FREQ_DEPTH=500 for us).
# Then, on the points that agree in blocks and are one stack of ours: max live per point and
# lifetimes.
#   - DHAT's mbk and mb are set only when an allocation of the point takes the process's live
#     bytes to a high: the point's blocks and bytes then, at most its own maximum (ours). So
#     DHAT's is never above ours; equal where the point's maximum fell on such a high; most
#     points DHAT has lower have 0 there (none of their allocations came at a high).
#   - lifetimes: DHAT counts instructions, we nanoseconds (our own instructions and the
#     machine's load in them), so the points' rank orders are compared, of total and of mean
#     lifetime, on the points whose every block was freed (DHAT's tl also counts the blocks
#     live at the end, to the end).
. "$srcdir/tests/tap.sh"
valgrind=$(command -v valgrind) || skip_all "valgrind is not installed (apt-get install valgrind)"
# (valgrind here runs this machine's programs, sqlite3 and python3 too: not another processor's)
[ "$mf_arch" = "$(uname -m)" ] || skip_all "valgrind, sqlite3 and python3 are $(uname -m)'s, the library $mf_arch's"
sqlite=$(command -v sqlite3) || skip_all "sqlite3 is not installed (apt-get install sqlite3)"
command -v python3 > /dev/null || skip_all "python3 is not installed (apt-get install python3)"
# the interpreter itself (not a wrapper script such as pyenv's shim)
python=/usr/bin/python3
[ -x "$python" ] || python=$(python3 -c 'import sys; print(sys.executable)')
base="HOME=$mf_work PYTHONHASHSEED=0 PYTHONMALLOC=malloc MALLOC_FREQ_DIR=$mf_work/ours
	MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_DEPTH=500 MALLOC_FREQ_CACHE=$mf_work/cache"
mkdir "$mf_work/ours"
# the environment valgrind gives its program, one NAME=VALUE a line
# shellcheck disable=SC2086 # (base: words)
env -i $base "$valgrind" -q --tool=dhat --dhat-out-file=/dev/null /usr/bin/env > "$mf_work/vgenv"
vgpreload=$(sed -n 's/^LD_PRELOAD=//p' "$mf_work/vgenv")
like "$vgpreload" "vgpreload_dhat" "valgrind's environment holds its LD_PRELOAD"
# ours: the library through a path of the same length ("//..." is "/")
ln -s "$MF_LIB" "$mf_work/l.so"
n=$((${#vgpreload} - ${#mf_work} - 5)) pad=
[ "$n" -gt 0 ] && pad=$(printf "%${n}s" "" | tr ' ' /)
ourenv=$(sed "s|^LD_PRELOAD=.*|LD_PRELOAD=$pad$mf_work/l.so|" "$mf_work/vgenv")

cat > "$mf_work/script.sql" << 'EOF'
create table t(id integer primary key, name text, v real);
with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000)
insert into t(name, v) select printf('name-%05d', x), x * 1.5 from c;
create index t_name on t(name);
select count(*), sum(v), max(name) from t where name like 'name-01%';
select name from t order by v desc limit 3;
select length(randomblob(16000000));
EOF
# (in a directory of its own: python3 lists its script's directory, one string per file)
mkdir "$mf_work/py"
cat > "$mf_work/py/module.py" << 'EOF'
import collections, json, os, re
print(" ".join("%s=%d" % (k, len(v)) for k, v in sorted(os.environ.items())))
print("offsets", *(os.lseek(fd, 0, os.SEEK_CUR) for fd in (0, 1, 2)))
words = ["w%05d" % (i * 7919 % 10007) for i in range(20000)]
counts = collections.Counter(w[:4] for w in words)
lengths = {w: len(w) for w in words}
text = json.dumps(sorted(lengths.items())[:3000], indent=1, check_circular=False)
back = json.loads(text)
pat = re.compile(r"w(\d)(\d+)")
tails = [pat.match(w).group(2) for w in words[:5000]]
print(len(counts), len(text), len(back), len(tails))
print(len(b"\0" * 16000000))
EOF

# compare NAME CMD...: CMD (its stdin from $mf_work/NAME.in) under DHAT and under the
# profiler, and the program points of both
compare() {
	name=$1; shift
	start=$(date +%s)
	# shellcheck disable=SC2086 # (base: words)
	within 600 env -i $base "$valgrind" -v --trace-symtab=yes --trace-symtab-patt='*' --tool=dhat \
		--num-callers=500 --run-libc-freeres=no --run-cxx-freeres=no \
		--dhat-out-file="$mf_work/$name.dhat" --log-file="$mf_work/$name.vglog.full" "$@" \
		< "$mf_work/$name.in" > "$mf_work/$name.vgout" 2> "$mf_work/$name.vgerr"
	rc=$?
	ok $rc "$name runs under valgrind --tool=dhat ($(($(date +%s) - start)) s)"
	[ $rc -eq 0 ] || sed 's/^/# /' "$mf_work/$name.vgerr"
	grep -E "Reading syms from|acquired as rx, bias|^rx_map" "$mf_work/$name.vglog.full" > "$mf_work/$name.vglog"
	rm -f "$mf_work/$name.vglog.full"
	start=$(date +%s)
	rm -rf "$mf_work/ours/"*
	# shellcheck disable=SC2046,SC2086 # (ourenv: NAME=VALUE words)
	within 120 env -i $ourenv "$@" < "$mf_work/$name.in" > "$mf_work/$name.out" 2> "$mf_work/$name.err"
	rc=$?
	ok $rc "$name runs under the profiler with lifetimes ($(($(date +%s) - start)) s)"
	[ $rc -eq 0 ] || sed 's/^/# /' "$mf_work/$name.err"
	is "$(cat "$mf_work/$name.out")" "$(cat "$mf_work/$name.vgout")" "$name: the same output in both runs"
	"$MF_PRINT" --json "$mf_work/ours" > "$mf_work/$name.json" 2> /dev/null
	ok $? "mf_print --json reads our profile"
	python3 "$srcdir/tests/progs/dhat_compare.py" "$mf_work/$name.dhat" "$mf_work/$name.vglog" \
		"$mf_work/$name.json" > "$mf_work/$name.cmp"
	st=$?
	ok $st "python3 reads and compares both"
	[ $st -eq 0 ] || return
	sed 's/^/# /' "$mf_work/$name.cmp"
	c() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$mf_work/$name.cmp"; }
	dhat=$(c dhat_totals) ours=$(c ours_totals) dlerr=$(c dlerror_net)
	is "$(c unmapped_frames)" 0 "$name: every DHAT frame is in a module valgrind named"
	is "$((${dhat%% *} - ${ours%% *}))" "${dlerr%% *}" \
		"$name: total blocks agree but for dlerror's buffer (DHAT: $dhat, ours: $ours, at the peak, at the end; dlerror: $dlerr)"
	is "$((${ours##* } + ${dlerr##* }))" "${dhat##* }" "$name: blocks at the end (leaks) agree, but for dlerror's buffer"
	# shellcheck disable=SC2046 # (words)
	set -- $(c keys)
	[ "${11}" -le "$dlerror_max" ]
	ok $? "$name: dlerror's buffer at ${11} program points (at most $dlerror_max with glibc $glibc)"
	is "$9" 0 "$name: of $1 program points, $3 agree, $5 differ by realloc, $7 by the peak's moment, ${11} dlerror's buffer, none otherwise"
	[ "$name" != sqlite ] || is "$7" 0 "$name: no point differs at the peak (one thread: our peak is exact)"
	[ "$3" -gt $(($1 * 9 / 10)) ]
	ok $? "$name: most program points agree in all three counts"
	# shellcheck disable=SC2046 # (words)
	set -- $(c realloc_sums)
	is "$1 $2 $3" "$5 $6 $7" "$name: the points realloc touched have DHAT's counts, moved between them"
	# shellcheck disable=SC2046 # (words)
	set -- $(c sizes)
	is "$2" 0 "$name: the $1 points whose blocks agree but not their bytes differ by int digits"
	# shellcheck disable=SC2046 # (words)
	set -- $(c peak_bytes)
	dpeak=$1 opeak=$2
	[ "$opeak" -ge 16000000 ] && [ "$dpeak" -ge 16000000 ] && [ $((dpeak - opeak)) -lt 65536 ] &&
		[ $((opeak - dpeak)) -lt 65536 ]
	ok $? "$name: both peaks hold the 16 MB, ours within 64 KiB of DHAT's ($opeak, $dpeak bytes)"
	[ "$name" != sqlite ] || is "$opeak" "$dpeak" "$name: our peak is DHAT's, to the byte"
	sizes=$(c sizes)
	# shellcheck disable=SC2046 # (words)
	set -- $(c window_bytes)
	# (where no block's size differs, the difference of the peaks is in those points alone)
	[ "${sizes% *}" != 0 ] || is "$1" $((dpeak - opeak)) "$name: the points whose blocks at the peak differ hold that difference"
	[ "$2" -lt 65536 ]
	ok $? "$name: ... changed by less than 64 KiB in all ($2 bytes)"
	# shellcheck disable=SC2046 # (words)
	set -- $(c max_live)
	is "${11}" 0 "$name: max live per point (DHAT's mbk and mb, ours max-live-blocks and max-live), DHAT's never above ours: of $3 points that agree, $5 equal, $7 DHAT's lower ($9 of them 0: none of their allocations at a high), ${11} higher"
	[ "$5" -gt 0 ]
	ok $? "$name: ... and some equal"
	# shellcheck disable=SC2046 # (words)
	set -- $(c lifetime)
	awk -v t="$3" -v m="$5" 'BEGIN { exit !(t >= 0.8 && m >= 0.8) }'
	ok $? "$name: lifetimes of the $1 points whose blocks were all freed rank as DHAT's do: total $3, mean $5 (Spearman; share distance $7, ours ns per DHAT instruction ${13})"
	[ "$9" -ge 7 ]
	ok $? "$name: ... $9 of DHAT's 10 longest-lived points (total lifetime) are in ours"
}
# (libdl's buffer for dlerror: glibc before 2.34, one)
glibc=$(getconf GNU_LIBC_VERSION | sed 's/^glibc //')
case $glibc in 2.[0-9] | 2.[0-9].* | 2.[12][0-9] | 2.[12][0-9].* | 2.3[0-3] | 2.3[0-3].*) dlerror_max=1 ;;
*) dlerror_max=0 ;; esac
cp "$mf_work/script.sql" "$mf_work/sqlite.in"
compare sqlite "$sqlite" :memory:
: > "$mf_work/python.in"
compare python "$python" -S "$mf_work/py/module.py"
done_testing
