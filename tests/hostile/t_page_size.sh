#!/bin/sh
# A kernel whose pages are larger than the library's 4 KiB (arm64 kernels built with 16 or 64
# KiB pages: RHEL 8's, Asahi's, Ubuntu's -64k): the program runs as without the profiler
# (output, stderr but for one line that says why, exit status; nothing said of a seccomp
# filter), nothing is recorded and no directory made, the API answers as the stub library
# does, the launcher runs the program without the library and says why (and ignores its
# snapshot signal), --attach refuses before it touches the process, and mf_print there reads
# a profile recorded elsewhere.
# Run on such a kernel as it is; elsewhere under qemu-user (make check-arm64), whose
# QEMU_PAGESIZE makes the pages the program sees that size (qemu before 9.0).
. "$srcdir/tests/tap.sh"

prog=$MF_TESTS/prog_sites
launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
[ -x "$launcher" ] || bail "no launcher at $launcher"
# page_size [VAR=VALUE]: the page size the kernel gives prog (glibc's LD_SHOW_AUXV)
page_size() { env "$@" LD_SHOW_AUXV=1 "$prog" 0 2> /dev/null | sed -n 's/^AT_PAGESZ: *//p'; }
here=$(page_size)
[ -n "$here" ] || bail "no AT_PAGESZ from LD_SHOW_AUXV=1 $prog"
if [ "$here" != 4096 ]; then
	sizes="$here" how=
elif [ "$(page_size QEMU_PAGESIZE=65536)" = 65536 ] &&
	[ "$(page_size QEMU_PAGESIZE=16384)" = 16384 ]; then
	sizes="16384 65536" how=QEMU_PAGESIZE
else
	skip_all "this kernel's pages are 4096 bytes, and no emulator here makes them larger (qemu-user's QEMU_PAGESIZE, before qemu 9.0: make check-arm64)"
fi
sleeper=
trap 'rm -rf "$mf_work"; [ -z "$sleeper" ] || kill "$sleeper" 2> /dev/null' EXIT

# A profile recorded with 4 KiB pages, for the reader to read with larger ones: under the
# emulator, with its pages as this kernel's.
if [ -n "$how" ]; then
	within 120 env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$prog" 2 > /dev/null
	set -- "$mf_work"/malloc_freq.*
	[ -d "$1" ] || bail "no profile of $prog recorded with 4096-byte pages"
	mv "$1" "$mf_work/small"
	"$MF_PRINT" --collapsed "$mf_work/small" > "$mf_work/small.txt" ||
		bail "mf_print cannot read $mf_work/small"
fi
# made_in DIR...: the profile directories made in each DIR
made_in() { for d in "$@"; do ls -d "$d"/malloc_freq.* 2> /dev/null; done; }
mkdir "$mf_work/cwd"
roots_before=$(made_in /)

for size in $sizes; do
	# at: the environment that gives the program pages of that size
	at=${how:+$how=$size}
	mkdir "$mf_work/$size"
	within 120 env $at "$prog" 4 > "$mf_work/plain.out" 2> "$mf_work/plain.err"
	plain_rc=$?
	within 120 env $at MALLOC_FREQ_DIR="$mf_work/$size" LD_PRELOAD="$MF_LIB" "$prog" 4 \
		> "$mf_work/got.out" 2> "$mf_work/got.err"
	is "$?" "$plain_rc" "$size-byte pages: exit status as without the profiler ($plain_rc)"
	cmp -s "$mf_work/plain.out" "$mf_work/got.out"
	ok $? "$size-byte pages: stdout as without the profiler"
	line="malloc_freq: this kernel's pages are $size bytes, and malloc_freq works only with 4096-byte pages; not recording"
	{ cat "$mf_work/plain.err"; echo "$line"; } > "$mf_work/want.err"
	cmp -s "$mf_work/want.err" "$mf_work/got.err"
	ok $? "$size-byte pages: stderr as without the profiler, and one line that says why nothing is recorded"
	is "$(ls -A "$mf_work/$size")" "" "$size-byte pages: nothing written in the profile directory"

	# the API as the stub library answers it (prog_api links it): ENOSYS, no directory
	(cd "$mf_work/cwd" && within 120 env $at "$MF_TESTS/prog_api" 100 100) > "$mf_work/api.plain"
	(cd "$mf_work/cwd" && within 120 env $at MALLOC_FREQ_DIR="$mf_work/$size" LD_PRELOAD="$MF_LIB" \
		"$MF_TESTS/prog_api" 100 100) > "$mf_work/api.got" 2> "$mf_work/api.err"
	is "$?" 0 "$size-byte pages: prog_api exits 0"
	is "$(cat "$mf_work/api.err")" "$line" "$size-byte pages: ... with the library in it (its line, and no other)"
	like "$(cat "$mf_work/api.got")" "^stats -1 ENOSYS 0 0\$" "$size-byte pages: malloc_freq_stats says ENOSYS"
	cmp -s "$mf_work/api.plain" "$mf_work/api.got"
	ok $? "$size-byte pages: prog_api prints what it prints with the stub library alone"
	(cd "$mf_work/cwd" && within 120 env $at MALLOC_FREQ_DIR="$mf_work/$size" LD_PRELOAD="$MF_LIB" \
		"$MF_TESTS/prog_snapshot" phases 10 10 10) > /dev/null 2> "$mf_work/snap.err"
	is "$?" 1 "$size-byte pages: malloc_freq_snapshot fails (prog_snapshot exits 1)"
	grep -qxF "prog_snapshot: malloc_freq_snapshot: Function not implemented" "$mf_work/snap.err"
	ok $? "$size-byte pages: ... with ENOSYS"
	(cd "$mf_work/cwd" && within 120 env $at MALLOC_FREQ_DIR="$mf_work/$size" LD_PRELOAD="$MF_LIB" \
		"$MF_TESTS/prog_snapshot" reset 10 10) > /dev/null 2>&1
	is "$?" 1 "$size-byte pages: malloc_freq_reset fails (prog_snapshot exits 1)"
	is "$(made_in "$mf_work/$size" "$mf_work/cwd")" "" "$size-byte pages: ... and no directory made (given, or the current one)"
	is "$(made_in /)" "$roots_before" "$size-byte pages: ... nor in / (where one went as root)"

	# a seccomp filter installed while not recording: nothing said of it
	within 20 env $at "$MF_TESTS/prog_seccomp" kill > "$mf_work/sec.plain" 2> "$mf_work/sec.plainerr"
	src=$?
	if [ $src = 5 ]; then
		within 20 env $at MALLOC_FREQ_DIR="$mf_work/$size" LD_PRELOAD="$MF_LIB" \
			"$MF_TESTS/prog_seccomp" kill > "$mf_work/sec.got" 2> "$mf_work/sec.err"
		is "$?" 5 "$size-byte pages: prog_seccomp, which installs a filter, exits 5 as without the profiler"
		{ cat "$mf_work/sec.plainerr"; echo "$line"; } > "$mf_work/want.err"
		cmp -s "$mf_work/want.err" "$mf_work/sec.err"
		ok $? "$size-byte pages: ... and the library says nothing of the filter"
	else
		skip "$size-byte pages: a seccomp filter installed while not recording: prog_seccomp cannot install its filter here (status $src)"
	fi

	out=$(cd "$mf_work" && within 120 env $at "$launcher" -o "$mf_work/launched$size" "$prog" 4 2> "$mf_work/launcher.err")
	is "$?" "$plain_rc" "$size-byte pages: the launcher exits as the program does ($plain_rc)"
	is "$out" "$(cat "$mf_work/plain.out")" "$size-byte pages: the launcher leaves the program's stdout alone"
	grep -qxF "malloc_freq: this kernel's pages are $size bytes, and the profiler works only with 4096-byte pages: $prog runs without it" \
		"$mf_work/launcher.err"
	ok $? "$size-byte pages: the launcher says at start that the program runs without the profiler"
	grep -qxF "malloc_freq: nothing recorded in $mf_work/launched$size: this kernel's pages are $size bytes, and the profiler works only with 4096-byte pages" \
		"$mf_work/launcher.err"
	ok $? "$size-byte pages: ... and, at the end, why it found nothing"
	grep -q "not recording" "$mf_work/launcher.err"
	is "$?" 1 "$size-byte pages: ... and does not preload the library (whose line would say it)"

	# a snapshot signal sent to the launcher is ignored (held, it would be passed on after 2 s
	# and kill the program)
	env $at "$launcher" --snapshot-signal USR2 -o "$mf_work/signalled$size" sleep 4 \
		> /dev/null 2>&1 &
	lpid=$!
	# (once it has a child it has blocked its signals, until its handlers are in place)
	n=0
	while [ -z "$(cat /proc/$lpid/task/*/children 2> /dev/null)" ] && [ $n -lt 200 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	kill -USR2 "$lpid"
	wait "$lpid"
	is "$?" 0 "$size-byte pages: a snapshot signal sent to the launcher neither ends it nor reaches the program"

	# --attach refuses before it touches the process (no gdb, nothing loaded into it)
	sleep 60 &
	sleeper=$!
	within 120 env $at "$launcher" --attach "$sleeper" -o "$mf_work/attached$size" 2> "$mf_work/attach.err"
	is "$?" 125 "$size-byte pages: --attach refuses (125)"
	is "$(cat "$mf_work/attach.err")" "malloc_freq: cannot attach to process $sleeper: this kernel's pages are $size bytes, and the profiler works only with 4096-byte pages" \
		"$size-byte pages: ... saying why"
	grep -q libmalloc_freq "/proc/$sleeper/maps"
	is "$?" 1 "$size-byte pages: ... and the process has no profiler loaded"
	kill "$sleeper" 2> /dev/null
	wait "$sleeper" 2> /dev/null
	sleeper=

	if [ -n "$how" ]; then
		within 120 env $at "$MF_PRINT" --collapsed "$mf_work/small" > "$mf_work/read.txt"
		is "$?" 0 "$size-byte pages: mf_print reads a profile recorded with 4096-byte pages"
		cmp -s "$mf_work/small.txt" "$mf_work/read.txt"
		ok $? "$size-byte pages: ... and prints what it prints with 4096-byte pages"
	else
		skip "$size-byte pages: mf_print reads a profile recorded with 4096-byte pages: none can be recorded on this kernel"
	fi
done
done_testing
