#!/bin/sh
# Code unloaded with dlclose and other code loaded at its address: one return address, first
# in a frame whose CFA is rsp-based (dlreuse_rsp.S's fa), then in one whose CFA is rbp-based
# (dlreuse_rbp.S's fb), and the other way round. Each phase's stacks must be whole, in every
# unwind mode: what was learned of the first library (the cached rules, and libunwind's own
# caches, which confirm rules and take stacks) must not describe the second.
. "$srcdir/tests/tap.sh"
d="$mf_work/build"
mkdir "$d" || bail "mkdir failed"
for lib in rsp rbp; do
	$CC -shared -o "$d/lib_$lib.so" "$srcdir/tests/progs/dlreuse_$lib.S" 2> "$d/err" ||
		skip_all "$CC cannot build a shared library from dlreuse_$lib.S: $(head -1 "$d/err")"
done
$CC -O2 -g -o "$d/prog" "$srcdir/tests/progs/prog_dlreuse.c" -ldl || bail "cannot build prog_dlreuse"

n=1000
for order in "rsp rbp" "rbp rsp"; do
	set -- $order
	first=fa second=fb
	[ "$1" = rbp ] && first=fb second=fa
	for mode in cached check libunwind; do
		what="$first then $second, MALLOC_FREQ_UNWIND=$mode"
		rm -rf "$mf_work"/malloc_freq.* "$MALLOC_FREQ_CACHE"
		MALLOC_FREQ_UNWIND=$mode profile_within 60 "$d/prog" "$d/lib_$1.so" "$d/lib_$2.so" $n \
			> "$d/out" 2> "$d/stderr"
		is "$?" 0 "$what: exits 0"
		# (a run that died in the second library printed one line: its stacks are checked)
		if [ "$(wc -l < "$d/out")" = 2 ] && [ "$(sed -n 1p "$d/out")" != "$(sed -n 2p "$d/out")" ]; then
			skip "$what: the second library's return address is not the first's ($(tr '\n' ' ' < "$d/out")): nothing to show"
			continue
		fi
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$d/c.txt" 2> /dev/null
		is "$(calls "$d/c.txt" "(^|;)main;one;run;$first;site;malloc\$"):$(calls "$d/c.txt" "(^|;)main;one;run;$second;site;malloc\$")" \
			"$n:$n" "$what: main;one;run;$first;site and main;one;run;$second;site, $n calls each"
		grep ';site;malloc ' "$d/c.txt" | sed 's/^/# /'
		if [ "$mode" = check ]; then
			is "$(grep -c 'unwind check: \(frame\|hot\)' "$d/stderr")" 0 "$what: every stack equals libunwind's"
			grep 'unwind check:' "$d/stderr" | head -5 | sed 's/^/# /'
		fi
	done
done
done_testing
