#!/bin/sh
# The cached unwinder against libunwind. MALLOC_FREQ_UNWIND=check walks every stack both ways
# and names on stderr any frame where they differ; each program below must run with no
# difference, unchanged, and (where its stacks are deterministic) leave the same report as
# MALLOC_FREQ_UNWIND=libunwind. Test programs cover threads, C++ exceptions, Rust, signal
# handlers, dlopen/dlclose of reloaded code and deep recursion; real programs an interpreter,
# a database shell and multi-threaded tools.
. "$srcdir/tests/tap.sh"
plugin="$MF_TESTS/.libs/plugin.so"

# checked NAME CMD...: same stdout and status as plain, and no difference reported
# (stdout less what varies between runs: pids, counts of timer signals). At exit the check
# says how many stacks it compared and how many of them the cached walk took (unless the
# program closed stderr first, as sort and xz do).
checked() {
	name=$1; shift
	rm -rf "$mf_work"/malloc_freq.*
	"$@" > "$mf_work/plain.out" 2> /dev/null; prc=$?
	MALLOC_FREQ_UNWIND=check MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$@" \
		> "$mf_work/check.out" 2> "$mf_work/check.err"; rc=$?
	is "$rc:$(sed "$vary" "$mf_work/check.out" | cksum)" "$prc:$(sed "$vary" "$mf_work/plain.out" | cksum)" "$name: same output and status"
	summary=$(grep 'unwind check: .* stacks compared' "$mf_work/check.err" | head -1 | sed 's/.*check: //')
	is "$(grep -c 'unwind check: \(frame\|hot\)' "$mf_work/check.err")" 0 "$name: every stack equals libunwind's (${summary:-no summary})"
	grep 'unwind check: \(frame\|hot\)' "$mf_work/check.err" | head -5 | sed 's/^/# /'
	ls "$mf_work"/malloc_freq.*/*.prof > /dev/null 2>&1 || fail "$name: no profile written"
}

# walked NAME: the last checked program's stacks mostly came from the cached walk
walked() {
	cached_walk "$1: the cached walk was used" || return 0
	like "$summary" "^[0-9]+ stacks compared, [1-9][0-9]* by the cached walk, 0 differed" "$1: the cached walk was used"
}

# all_walked NAME: every one of its stacks came from the cached walk (each entry point's frame
# is the one the walk starts from: lib/interpose.c's malloc and calloc reach the rest of
# their work by a jump, which a build that made it a call would break)
all_walked() {
	cached_walk "$1: every stack from the cached walk" || return 0
	n=$(echo "$summary" | sed -n 's/^\([0-9]*\) stacks compared, \([0-9]*\) by the cached walk, .*/\1 \2/p')
	set -- "$1" $n
	[ -n "${2:-}" ] && [ "$2" = "$3" ]; ok $? "$1: every stack from the cached walk (${summary:-no summary})"
}

# hot NAME: and stacks were found among the thread's hot ones, each at the leaf the
# checked walk gave (a different leaf is named on stderr and counted as differed)
hot() {
	cached_walk "$1: hot stacks were found" || return 0
	like "$summary" ", 0 differed; [1-9][0-9]* found among the hot stacks$" "$1: hot stacks were found, at the walk's leaves"
}

# same_report NAME CMD...: the collapsed report is the same with either unwinder. (Less the
# loader's table of objects, which grows by allocating: MALLOC_FREQ_UNWIND=libunwind loads
# libunwind and liblzma at start, the cached walk only if it needs them, so the program's
# dlopen finds that table in another state. The cached run's rules come from the rule cache
# the runs before warmed, which says libunwind is not needed.) Both run without glibc's
# optional static TLS: where thread-local variables are reached by TLS descriptors (arm64),
# libunwind's 16 bytes, loaded by dlopen, take that room (512 bytes), and a library the
# program loads later with 512 bytes of its own gets dynamic TLS (four allocations more in
# the loader) where a run that never loaded libunwind gives it static TLS.
same_report() {
	name=$1; shift
	for mode in cached libunwind; do
		rm -rf "$mf_work"/malloc_freq.*
		GLIBC_TUNABLES=${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=0 \
			MALLOC_FREQ_UNWIND=$mode MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$@" > /dev/null 2>&1
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* 2> /dev/null |
			grep -v ';_dl_find_object_update;' | sort > "$mf_work/$mode.txt"
	done
	[ -s "$mf_work/cached.txt" ] && cmp -s "$mf_work/cached.txt" "$mf_work/libunwind.txt"
	ok $? "$name: the same report as with MALLOC_FREQ_UNWIND=libunwind ($(wc -l < "$mf_work/cached.txt") stacks)"
}

vary='s/^\(child\|handled\) [0-9]*$/\1 N/'
# the check itself: a library whose hot stacks give a wrong leaf now and then is caught (hot
# stacks are the cached walk's)
if cached_walk "check mode names a hot stack's wrong leaf"; then
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_UNWIND=check MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_TESTS/.libs/libmalloc_freq_fault.so" \
		"$MF_TESTS/prog_sites" > /dev/null 2> "$mf_work/fault.err"
	like "$(grep -c 'unwind check: hot stack at leaf' "$mf_work/fault.err")" '^[1-9]' "check mode names a hot stack's wrong leaf (a library built to give some)"
	like "$(grep 'stacks compared' "$mf_work/fault.err")" ', [1-9][0-9]* differed;' "... and counts it as differed"
else
	skip "... and counts it as differed: no cached walk for $mf_arch"
fi
checked "4 threads, 9 entry points" "$MF_TESTS/prog_sites"
all_walked "4 threads, 9 entry points"
same_report "4 threads, 9 entry points" "$MF_TESTS/prog_sites"
checked "1000 sites at 5 depths" "$MF_TESTS/prog_deep" 5
walked "1000 sites at 5 depths"
all_walked "1000 sites at 5 depths"
checked "stacks 40 deep cut at MALLOC_FREQ_DEPTH=5" env MALLOC_FREQ_DEPTH=5 "$MF_TESTS/prog_deep" 40
same_report "1000 sites at 5 depths" "$MF_TESTS/prog_deep" 5
# (a C++ program for another processor needs that processor's libstdc++: libstdc++6:arm64)
if "$MF_TESTS/prog_cxx" > /dev/null 2> "$mf_work/cxx.err" ||
	! grep -q 'error while loading shared libraries' "$mf_work/cxx.err"; then
	checked "C++ new, exceptions thrown while allocating" "$MF_TESTS/prog_cxx"
	same_report "C++ new, exceptions thrown while allocating" "$MF_TESTS/prog_cxx"
else
	skip "C++ new, exceptions thrown while allocating: prog_cxx does not start here: $(head -1 "$mf_work/cxx.err")"
fi
# frames shared with the last stack, and frames that only look shared: exact counts per site
checked "reused outer frames" "$MF_TESTS/prog_reuse" 3000
hot "reused outer frames"
same_report "reused outer frames" "$MF_TESTS/prog_reuse" 3000
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_reuse" 3000 > /dev/null
"$MF_PRINT" --collapsed --lines "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
for site in A B C D; do
	line=$(grep -n "call site $site" "$srcdir/tests/progs/prog_reuse.c" | cut -d: -f1)
	is "$(calls "$mf_work/c.txt" ";main prog_reuse.c:$line;(framed [^;]*;)?relay [^;]*;leaf [^;]*;malloc$")" 3000 "call site $site of main: its own 3000 calls"
done
is "$(calls "$mf_work/c.txt" ";site_one [^;]*;relay [^;]*;leaf [^;]*;malloc$")" 3000 "the same stack 3000 times in a row: 3000 calls"
checked "coroutines on stacks of their own" "$MF_TESTS/prog_reuse" 3000 coro
hot "coroutines on stacks of their own"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
for site in coro_site_0 coro_site_1; do
	is "$(calls "$mf_work/c.txt" "^[^;]*;coro;$site;relay;leaf;malloc$")" 3000 "$site, on its own stack: 3000 calls"
done
is "$(calls "$mf_work/c.txt" ";coros;main_site;relay;leaf;malloc$")" 6000 "main_site, between the switches: 6000 calls"
checked "a stack unmapped, a smaller one mapped at its place" "$MF_TESTS/prog_reuse" 1 remap
checked "two sites, their inner frames at one address, rbp frames between" "$MF_TESTS/prog_reuse" 3000 level
hot "two sites, their inner frames at one address"
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_reuse" 3000 level > /dev/null
"$MF_PRINT" --collapsed --lines "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
for site in a b; do
	line=$(grep -n "level site $site" "$srcdir/tests/progs/prog_reuse.c" | cut -d: -f1)
	is "$(calls "$mf_work/c.txt" ";level_site prog_reuse.c:$line;framed_to [^;]*;relay_nofp [^;]*;leaf_nofp [^;]*;malloc$")" 3000 "level site $site, where the other's return address was: 3000 calls"
done
# code no unwind table covers (a JIT compiler's): stepped by its frame pointer, whole (its
# instructions are x86-64's)
if [ "$mf_arch" != x86_64 ]; then
	skip "JIT code in anonymous memory: prog_jit's code is x86-64's"
elif cached_walk "JIT code in anonymous memory"; then
	checked "JIT code in anonymous memory" "$MF_TESTS/prog_jit" 3000
	walked "JIT code in anonymous memory"
	hot "JIT code in anonymous memory"
	rm -rf "$mf_work"/malloc_freq.*
	profile "$MF_TESTS/prog_jit" 3000 > /dev/null
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
	is "$(calls "$mf_work/c.txt" ";main;outer;[^;]*;relay;[^;]*;site;malloc$")" 3000 "JIT frames: main, outer, relay and site in their places, 3000 calls"
	# a run the rule cache says needs nothing more from libunwind: without it, the same stacks
	rm -rf "$mf_work"/malloc_freq.*
	out=$(profile "$MF_TESTS/prog_jit" 3000 maps)
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"
	is "$out:$(calls "$mf_work/c.txt" ";main;outer;[^;]*;relay;[^;]*;site;malloc$")" "done:3000" "JIT frames, a repeated run without libunwind: the same 3000 calls"
fi
# (under qemu-user a handler's call checked against libunwind outlasts the 50 us timer: the
# next signal is due when it returns, and the loop never runs again)
if native "allocations in signal handlers, checked (under qemu-user the handler outlasts the timer)"; then
	checked "allocations in signal handlers" "$MF_TESTS/prog_signal" 200000
fi
checked "200 dlopen/dlclose cycles of a plugin that allocates" "$MF_TESTS/prog_hazard" dlloop "$plugin" 200
same_report "200 dlopen/dlclose cycles" "$MF_TESTS/prog_hazard" dlloop "$plugin" 200
checked "fork from 4 threads" "$MF_TESTS/prog_fork" storm
why=$(rust_why)
if [ -n "$why" ]; then
	skip "Rust: $why"
elif ! native "Rust"; then
	:
elif rustc -C opt-level=1 -g -o "$mf_work/prog_rust" "$srcdir/tests/progs/prog_rust.rs" 2> "$mf_work/rustc.err"; then
	checked "Rust" "$mf_work/prog_rust"
	same_report "Rust" "$mf_work/prog_rust"
else
	sed 's/^/# /' "$mf_work/rustc.err" | head -5
	fail "Rust: rustc builds tests/progs/prog_rust.rs"
fi

# real programs from Debian packages (this machine's: they take only its own library)
if native "real programs from Debian packages"; then
	cat > "$mf_work/work.py" <<'PY'
import json, re, collections
d = collections.Counter()
for i in range(20000):
    s = json.dumps({"k": i, "v": [i, str(i) * 3]})
    d[re.sub(r"\d", "x", s)[:12]] += len(json.loads(s)["v"])
print(len(d), sum(d.values()))
PY
	if [ -x /usr/bin/python3 ]; then
		checked "python3 (json, re)" /usr/bin/python3 "$mf_work/work.py"
		walked "python3"
		hot "python3"
	fi
	if command -v sqlite3 > /dev/null; then
		cat > "$mf_work/work.sql" <<'SQL'
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
INSERT INTO t SELECT x, printf('row %d', x) FROM c;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(b)) FROM t WHERE b LIKE 'row 1%';
SQL
		checked "sqlite3 shell" sqlite3 :memory: ".read $mf_work/work.sql"
		walked "sqlite3 shell"
		hot "sqlite3 shell"
	fi
	checked "perl" perl -e 'my %h; $h{$_ % 977} .= "x$_" for 1 .. 100000; print scalar(keys %h), "\n"'
	seq 1 200000 > "$mf_work/numbers"
	checked "sort --parallel=2" sort --parallel=2 -S 1M -r "$mf_work/numbers"
	checked "xz -T2" xz -T2 -1 -c "$mf_work/numbers"
fi
done_testing
