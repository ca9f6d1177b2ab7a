#!/bin/sh
# A child made by syscall(SYS_fork) or clone(SIGCHLD), where no atfork handler runs: it gets
# a directory of its own, and the parent's profile never receives its calls, nor is it
# finalized by the child's exit.
. "$srcdir/tests/tap.sh"
# (qemu-user takes MADV_WIPEONFORK and wipes nothing: the child finds its parent's state)
[ "$mf_arch" = "$(uname -m)" ] ||
	skip_all "qemu-user answers MADV_WIPEONFORK but does not wipe the page in a raw fork's child"
for mode in sysfork clone; do
	rm -rf "$mf_work"/malloc_freq.*
	out=$(profile_within 20 "$MF_TESTS/prog_rawfork" $mode); rc=$?
	child=$(printf '%s\n' "$out" | sed -n 's/^child //p')
	is "$rc:${child:+child}" "0:child" "$mode: the parent and the child exit 0"
	pd=$(ls -d "$mf_work"/malloc_freq.* | grep -v "malloc_freq\.$child\$" | head -1)
	"$MF_PRINT" --collapsed "$pd" > "$mf_work/p.txt" 2> /dev/null
	is "$(calls "$mf_work/p.txt" ';site_parent;malloc$'):$(calls "$mf_work/p.txt" 'site_child')" "600:0" \
		"... the parent's profile has its own 600 calls and none of the child's"
	"$MF_PRINT" --collapsed "$mf_work/malloc_freq.$child" > "$mf_work/c.txt" 2> /dev/null
	is "$(calls "$mf_work/c.txt" ';site_child;malloc$'):$(calls "$mf_work/c.txt" 'site_parent')" "200:0" \
		"... the child's directory malloc_freq.$child has its 200 calls and none of the parent's"
done
rm -rf "$mf_work"/malloc_freq.*
out=$(profile_within 20 "$MF_TESTS/prog_rawfork" sysfork kill); rc=$?
child=$(printf '%s\n' "$out" | sed -n 's/^child //p')
is "$rc" 137 "a parent killed after its syscall(SYS_fork) child exited: dies by SIGKILL"
pd=$(ls -d "$mf_work"/malloc_freq.* | grep -v "malloc_freq\.$child\$" | head -1)
like "$("$MF_PRINT" "$pd" 2> /dev/null)" "1 file not finalized" "... its own file is not marked finalized by the child's exit"
# The child's gate lies in the page wiped there: recording off stays off in it.
rm -rf "$mf_work"/malloc_freq.*
out=$(MALLOC_FREQ_START=off profile_within 20 "$MF_TESTS/prog_rawfork" sysfork); rc=$?
child=$(printf '%s\n' "$out" | sed -n 's/^child //p')
is "$rc:${child:+child}" "0:child" "recording off: the parent and the child exit 0"
for d in "$mf_work"/malloc_freq.*; do
	"$MF_PRINT" --collapsed "$d" 2> /dev/null
done > "$mf_work/off.txt"
is "$(calls "$mf_work/off.txt" 'site_'):$(ls -d "$mf_work"/malloc_freq.* | wc -l)" "0:2" \
	"... no call of the parent's or the child's is recorded, in either's directory"
done_testing
