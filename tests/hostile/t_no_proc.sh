#!/bin/sh
# A process that has no /proc (a chroot or sandbox without it; here, an empty tmpfs mounted
# over /proc in a mount namespace of its own, as root): the program runs as without the
# profiler, every call is recorded, and its own frames still get their names, file and line,
# because the library learns its path from the path it was executed by, absolute or relative
# (the module map's and the process record's).
# A script's interpreter is not named after the script. Each case once with /proc, the same.
. "$srcdir/tests/tap.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (a mount namespace, a tmpfs over /proc)"
command -v unshare > /dev/null || skip_all "no unshare (util-linux)"
native "the library under emulation (qemu-user reads /proc itself)" || { done_testing; exit 0; }
unshare -m sh -c 'mount -t tmpfs none /proc && [ ! -e /proc/self ]' 2> /dev/null ||
	skip_all "cannot mount over /proc in a mount namespace here"
prog="$MF_TESTS/prog_sites"
real=$(cd "$MF_TESTS" && pwd -P)/prog_sites # (as the kernel and getcwd give it)
want=$(within 20 "$prog" 2 2> "$mf_work/want.err"); wrc=$?
# has TEXT STRING: TEXT holds STRING, as it is (grep -F)
has() { printf '%s\n' "$1" | grep -Fq -- "$2"; }
# run HOW CMD...: CMD with the profile in $mf_work, without /proc if HOW is bare
run() {
	how=$1
	shift
	if [ "$how" = bare ]; then
		within 20 unshare -m sh -c 'mount -t tmpfs none /proc && exec "$@"' sh \
			env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$@"
	else
		within 20 env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$@"
	fi
}
for how in bare proc; do
	for path in absolute relative; do
		rm -rf "$mf_work"/malloc_freq.*
		if [ $path = absolute ]; then
			got=$(run $how "$prog" 2 2> "$mf_work/err"); rc=$?
		else # (from its folder: the kernel's AT_EXECFN is ./prog_sites)
			got=$(cd "$MF_TESTS" && run $how ./prog_sites 2 2> "$mf_work/err"); rc=$?
		fi
		what="$how, $path path"
		[ $how = bare ] && what="no /proc, $path path"
		is "$rc:$got:$(cat "$mf_work/err")" "$wrc:$want:$(cat "$mf_work/want.err")" \
			"$what: runs as without the profiler (status, output, errors)"
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
		is "$(calls "$mf_work/c.txt" ';worker;site_pvalloc;pvalloc$')" 1800 \
			"... site_pvalloc named: its 2 x 900 calls, under worker"
		is "$(calls "$mf_work/c.txt" '\[main\]')" 0 "... no frame of the program left as [main]+offset"
		json=$("$MF_PRINT" --json "$mf_work"/malloc_freq.* 2> /dev/null)
		has "$json" "\"path\": \"$real\""
		ok $? "... the module map holds the program's absolute path"
		has "$json" "\"exe\": \"$real\""
		ok $? "... and so does the process record"
	done
done

# A script: the kernel's AT_EXECFN is the script's path, the program its interpreter's.
printf '#!/bin/sh\nexit 3\n' > "$mf_work/script.sh"
chmod 755 "$mf_work/script.sh"
rm -rf "$mf_work"/malloc_freq.*
run bare "$mf_work/script.sh" 2> "$mf_work/err"; rc=$?
is "$rc" 3 "no /proc, a #! script: runs as without the profiler (exit 3)"
got=$("$MF_PRINT" --json "$mf_work"/malloc_freq.* 2> /dev/null | grep -o '"path": "[^"]*"')
printf '%s\n' "$got" | grep -q '"path": "\[main\]"' && ! printf '%s\n' "$got" | grep -q 'script\.sh'
ok $? "... its interpreter is [main] in the module map, not named after the script"
done_testing
