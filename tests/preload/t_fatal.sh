#!/bin/sh
# Fatal signals in the host: its own handler still runs, it still dumps core (as it does
# without the profiler), and every call recorded before the crash is on disk.
. "$srcdir/tests/tap.sh"
for how in segv_handler abort_handler; do
	mkdir -p "$mf_work/plain.$how" "$mf_work/prof.$how"
	plain=$(cd "$mf_work/plain.$how" && "$MF_TESTS/run_status" "$MF_TESTS/prog_kill" 555 $how 2>&1)
	got=$(cd "$mf_work/prof.$how" && MALLOC_FREQ_DIR="$mf_work/prof.$how" LD_PRELOAD="$MF_LIB" \
		"$MF_TESTS/run_status" "$MF_TESTS/prog_kill" 555 $how 2>&1)
	# (qemu-user, writing the program's core, reads every page of the file's reserved mapping,
	# those past the file's end too, and dies of their SIGBUS: not an arm64 machine's ending)
	if native "$how: it ended the same way (qemu-user dies of SIGBUS writing the core)"; then
		is "$got" "$plain" "$how: the program's handler ran and it ended the same way ($(echo $plain | tr '\n' ' '))"
	fi
	like "$got" "program's own handler ran" "$how: the handler's message is there"
	if ls "$mf_work/plain.$how" | grep -q '^core'; then
		ls "$mf_work/prof.$how" | grep -q '^core'; ok $? "$how: a core file was dumped, as without the profiler"
	fi
	"$MF_PRINT" --collapsed "$mf_work/prof.$how" > "$mf_work/c.txt" 2>/dev/null
	is "$(calls "$mf_work/c.txt" ';site_before_end;malloc$')" 555 "$how: the 555 calls before the crash are on disk"
done
done_testing
