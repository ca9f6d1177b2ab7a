#!/bin/sh
# fork() from a process with two threads: the child gets its own directory and starts from
# zero; the parent's profile never receives the child's calls.
. "$srcdir/tests/tap.sh"
out=$(profile "$MF_TESTS/prog_fork" 300 200); rc=$?
is "$rc" 0 "prog_fork exits 0 under the profiler"
child=$(printf '%s\n' "$out" | sed -n 's/^child //p')
set -- "$mf_work"/malloc_freq.*
is "$#" 2 "two profile directories (parent and child)"
cd_=$mf_work/malloc_freq.$child
[ -d "$cd_" ]; ok $? "child's directory is malloc_freq.<childpid>"
pd=$(ls -d "$mf_work"/malloc_freq.* | grep -v "malloc_freq\.$child\$")
"$MF_PRINT" --collapsed "$pd" > "$mf_work/p.txt"; ok $? "parent profile reads"
"$MF_PRINT" --collapsed "$cd_" > "$mf_work/c.txt"; ok $? "child profile reads"
is "$(calls "$mf_work/p.txt" ';site_parent;malloc$')" 600 "parent: 300 before + 300 after the fork"
is "$(calls "$mf_work/p.txt" 'site_child')" 0 "parent: none of the child's calls"
is "$(calls "$mf_work/c.txt" ';site_child;malloc$')" 200 "child: its 200 calls"
is "$(calls "$mf_work/c.txt" 'site_parent')" 0 "child: starts from zero (none of the parent's calls)"
done_testing
