#!/bin/sh
# The program under the profiler behaves as without it: output, exit status, errno, signal mask.
. "$srcdir/tests/tap.sh"
same() { # DESC CMD...: stdout, stderr and status equal with and without the profiler
	desc=$1; shift
	"$@" > "$mf_work/o1" 2> "$mf_work/e1"; r1=$?
	profile "$@" > "$mf_work/o2" 2> "$mf_work/e2"; r2=$?
	if cmp -s "$mf_work/o1" "$mf_work/o2" && cmp -s "$mf_work/e1" "$mf_work/e2" && [ $r1 = $r2 ]; then
		pass "$desc (status $r1)"
	else
		fail "$desc (status $r1 vs $r2)"
		diff "$mf_work/o1" "$mf_work/o2" | head -10 | sed 's/^/# /'
		diff "$mf_work/e1" "$mf_work/e2" | head -10 | sed 's/^/# /'
	fi
}
same "errno as main starts, and return values and errno of every entry point on edge values" "$MF_TESTS/prog_errno"
# (the rest runs the machine's own programs, sh, sort and ls, under the library: not where it
# is another processor's)
if native "a shell, sort, a limited address space and the descriptors under the profiler"; then
	same "the same under RLIMIT_AS, where large allocations fail" sh -c "ulimit -v 200000; exec '$MF_TESTS/prog_errno'"
	same "a shell's output and exit status" sh -c 'echo out; echo err >&2; exit 3'
	same "sort's output" sort -r "$srcdir/tests/tap.sh"
	same "a program killed by a signal" sh -c 'kill -TERM $$'
	same "a program reading stdin" sh -c 'echo abc | tr a-z A-Z'
	profile sh -c 'exit 0' 2> "$mf_work/e"
	is "$(cat "$mf_work/e")" "" "nothing on stderr when all is well"
	fds_plain=$(sh -c 'ls /proc/$$/fd' | tr '\n' ' ')
	fds_prof=$(profile sh -c 'ls /proc/$$/fd' | tr '\n' ' ')
	is "$fds_prof" "$fds_plain" "no descriptor added to the program (the unwinder's pipe is emulated)"
fi
done_testing
