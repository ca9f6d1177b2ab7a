#!/bin/sh
# A kernel whose pages are larger than the library's 4 KiB (arm64 kernels built with 16 or 64
# KiB pages: RHEL 8's, Asahi's, Ubuntu's -64k): the program runs as without the profiler
# (output, stderr but for one line that says why, exit status), nothing is recorded, the
# launcher says why it found nothing, --attach refuses before it touches the process, and
# mf_print there reads a profile recorded elsewhere.
# Run on such a kernel as it is; elsewhere under qemu-user (make check-arm64), whose
# QEMU_PAGESIZE makes the pages the program sees that size.
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
elif [ "$(page_size QEMU_PAGESIZE=65536)" = 65536 ]; then
	sizes="16384 65536" how=QEMU_PAGESIZE
else
	skip_all "this kernel's pages are 4096 bytes, and no emulator here makes them larger (qemu-user's QEMU_PAGESIZE: make check-arm64)"
fi

# a profile recorded with 4 KiB pages, for the reader to read with larger ones
within 120 env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$prog" 2 > /dev/null
set -- "$mf_work"/malloc_freq.*
[ -d "$1" ] || bail "no profile of $prog recorded with 4096-byte pages"
mv "$1" "$mf_work/small"
"$MF_PRINT" --collapsed "$mf_work/small" > "$mf_work/small.txt" || bail "mf_print cannot read $mf_work/small"

for size in $sizes; do
	# at: the environment that gives the program pages of that size
	at=${how:+$how=$size}
	mkdir "$mf_work/$size"
	env $at "$prog" 4 > "$mf_work/plain.out" 2> "$mf_work/plain.err"
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

	out=$(cd "$mf_work" && env $at "$launcher" -o "$mf_work/launched$size" "$prog" 4 2> "$mf_work/launcher.err")
	is "$?" "$plain_rc" "$size-byte pages: the launcher exits as the program does ($plain_rc)"
	is "$out" "$(cat "$mf_work/plain.out")" "$size-byte pages: the launcher leaves the program's stdout alone"
	grep -qxF "malloc_freq: nothing recorded in $mf_work/launched$size: this kernel's pages are $size bytes, and the profiler works only with 4096-byte pages" \
		"$mf_work/launcher.err"
	ok $? "$size-byte pages: the launcher says why it found nothing"

	# --attach refuses before it touches the process (no gdb, nothing loaded into it)
	sleep 60 &
	pid=$!
	env $at "$launcher" --attach "$pid" -o "$mf_work/attached$size" 2> "$mf_work/attach.err"
	is "$?" 125 "$size-byte pages: --attach refuses (125)"
	is "$(cat "$mf_work/attach.err")" "malloc_freq: cannot attach to process $pid: this kernel's pages are $size bytes, and the profiler works only with 4096-byte pages" \
		"$size-byte pages: ... saying why"
	grep -q libmalloc_freq "/proc/$pid/maps"
	is "$?" 1 "$size-byte pages: ... and the process has no profiler loaded"
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null

	env $at "$MF_PRINT" --collapsed "$mf_work/small" > "$mf_work/read.txt"
	is "$?" 0 "$size-byte pages: mf_print reads a profile recorded with 4096-byte pages"
	cmp -s "$mf_work/small.txt" "$mf_work/read.txt"
	ok $? "$size-byte pages: ... and prints what it prints with 4096-byte pages"
done
done_testing
