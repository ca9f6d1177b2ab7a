#!/bin/sh
# Allocation inside a signal handler that interrupts malloc and the profiler: no deadlock, no
# corruption, the main loop's count exact, and every handler call either attributed to its
# stack or counted as unattributed in the summary: never dropped.
. "$srcdir/tests/tap.sh"
n=2000000 us=50
# Emulated (qemu-user), the timer keeps the host's time while the handler's allocation, its
# stack taken by libunwind through the signal frame, takes some 0.2 ms (37 times the native
# cost), at times 2: a 50 us timer fires again before the handler returns, the signal pending
# at its sigreturn is delivered at once, and the main loop never advances (as it would not on
# any machine whose handler outlasts the timer). There a 5 ms timer, and more calls to
# interrupt.
[ "$mf_arch" = "$(uname -m)" ] || n=10000000 us=5000
out=$(MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" timeout -k 10 120 "$MF_TESTS/prog_signal" $n $us); rc=$?
is "$rc" 0 "finishes (no deadlock, no crash)"
handled=$(printf '%s\n' "$out" | sed -n 's/^handled //p')
[ "${handled:-0}" -gt 100 ]; ok $? "the handler ran often (${handled:-0} times)"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"; ok $? "mf_print reads the profile"
is "$(calls "$mf_work/c.txt" ';site_main_loop;malloc$')" $n "main loop: exactly $n calls"
attributed=$(calls "$mf_work/c.txt" ';site_in_handler;malloc$')
nested=$("$MF_PRINT" "$mf_work"/malloc_freq.* | sed -n 's/^  \([0-9]*\) calls arrived while the profiler was recording.*/\1/p')
is "$((attributed + ${nested:-0}))" "$handled" "handler: $attributed attributed + ${nested:-0} unattributed = $handled calls"
done_testing
