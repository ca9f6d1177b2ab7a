#!/bin/sh
# The leaks and the peak as the reports state them, on a program built here (lifetimes on):
#   site_kept    3 blocks of 100 bytes, leaked
#   site_many   30 blocks of malloc(0), leaked: 0 bytes
#   site_few     5 blocks of malloc(0), leaked
#   a forked child: site_child 20 blocks of 2000 bytes, freed (its own peak), then it exits
#   then snapshot "mid", and site_late 10 blocks of 1000 bytes, freed
# --leaks leaves out no leaking stack, 0 bytes or not: where bytes tie, the more blocks first.
# The summary states the peak once, the figure the at-peak column and --json total; in a
# window (--since mid) it says the peak is the whole run's, never a window's blocks beside it.
# One leaked block and one free of a block never seen are said in the singular.
. "$srcdir/tests/tap.sh"
cat > "$mf_work/p.c" << 'PROG'
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "malloc_freq.h"
#pragma weak malloc_freq_snapshot
static void *volatile keep[64];
#define SITE(name, size) __attribute__((noinline)) static void *name(void) { return malloc(size); }
SITE(site_kept, 100) SITE(site_many, 0) SITE(site_few, 0) SITE(site_child, 2000) SITE(site_late, 1000)
static void take(void *(*site)(void), int n, int at) { for (int i = 0; i < n; i++) keep[at + i] = site(); }
static void drop(int n, int at) { for (int i = 0; i < n; i++) free(keep[at + i]); }
int main(void)
{
	take(site_kept, 3, 0);
	take(site_many, 30, 3);
	take(site_few, 5, 33);
	pid_t pid = fork();
	if (pid == 0) {
		take(site_child, 20, 40);
		drop(20, 40);
		_exit(0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 1;
	if (malloc_freq_snapshot && malloc_freq_snapshot("mid") < 0)
		return 1;
	take(site_late, 10, 40);
	drop(10, 40);
	return 0;
}
PROG
$CC -O1 -g -fno-omit-frame-pointer -fno-builtin -I"$srcdir/include" -o "$mf_work/p" "$mf_work/p.c" ||
	bail "cannot build the program"
MALLOC_FREQ_LIFETIMES=1 profile_within 60 "$mf_work/p"; is "$?" 0 "the program runs with lifetimes"
[ "$(ls -d "$mf_work"/malloc_freq.* | wc -l)" = 2 ] || bail "not two profile directories"

# --leaks
"$MF_PRINT" --leaks -t 0 "$mf_work" > "$mf_work/leaks" 2> /dev/null; is "$?" 0 "--leaks -t 0: exits 0"
summary=$(sed -n 's/^  lifetimes: \([0-9]*\) blocks\{0,1\} .*/\1/p' "$mf_work/leaks")
rows=$(awk '/^Stacks with blocks/ { s = 1 } s && /^ +calls +%/ { on = 1; next } on && NF { print }' "$mf_work/leaks")
listed=$(echo "$rows" | awk '{ s += $6 } END { print s + 0 }')
is "$listed" "$summary" "--leaks -t 0 lists every leaked block the summary counts ($summary)"
site() { echo "$rows" | grep "<- $1 " | awk '{ print $6 }'; }
is "$(site site_kept) $(site site_many) $(site site_few)" "3 30 5" \
	"site_kept's 3 blocks, and the 30 and 5 zero-byte blocks of site_many and site_few"
is "$(echo "$rows" | grep -o '<- site_[a-z]*' | tr '\n' ' ')" "<- site_kept <- site_many <- site_few " \
	"by leaked bytes; where they tie (0 B), the more blocks first"
"$MF_PRINT" --leaks "$mf_work" > "$mf_work/leaks1" 2> /dev/null
rows=$(awk '/^Stacks with blocks/ { s = 1 } s && /^ +calls +%/ { on = 1; next } on && NF { print }' "$mf_work/leaks1")
is "$(echo "$rows" | awk '{ s += $6 } END { print s + 0 }')" "$summary" \
	"--leaks at the default threshold: the folded line counts the rest ($summary blocks in all)"

# the peak
"$MF_PRINT" "$mf_work" > "$mf_work/out" 2> /dev/null
peak=$(grep '^  peak' "$mf_work/out")
is "$(grep -c '^  peak' "$mf_work/out")" 1 "the summary states the peak once"
"$MF_PRINT" --json "$mf_work" > "$mf_work/json" 2> /dev/null
jbytes=$(sed -n 's/.*"summary".*"total": {[^}]*"peak": \([0-9]*\).*/\1/p' "$mf_work/json" | head -1)
jblocks=$(sed -n 's/.*"summary".*"total": {[^}]*"peak-blocks": \([0-9]*\).*/\1/p' "$mf_work/json" | head -1)
if [ -z "$jbytes" ] && command -v python3 > /dev/null; then
	jbytes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["total"]["peak"])' "$mf_work/json")
	jblocks=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["total"]["peak-blocks"])' "$mf_work/json")
fi
"$MF_PRINT" --collapsed --weight peak "$mf_work" > "$mf_work/cb" 2> /dev/null
"$MF_PRINT" --collapsed --weight peak-blocks "$mf_work" > "$mf_work/cn" 2> /dev/null
cbytes=$(calls "$mf_work/cb" .) cblocks=$(calls "$mf_work/cn" .)
is "$jbytes $jblocks" "$cbytes $cblocks" "--json's peak total is the at-peak column's ($cbytes B in $cblocks blocks)"
[ "$cblocks" -ge 58 ]; ok $? "which holds both processes' peaks: the child's 20 blocks and the parent's 38 or more"
want=$(awk -v b="$cbytes" 'BEGIN { u = 0; v = b; while (v >= 1024 && u < 6) { v /= 1024; u++ }
	split("B KiB MiB GiB", n, " "); if (u == 0) printf "%d B", b; else printf "%.1f %s", v, n[u + 1] }')
like "$peak" "^  peak: $want live in $cblocks blocks, each process's own peak summed " \
	"the summary says that figure: $want in $cblocks blocks, each process's own peak summed"
"$MF_PRINT" --since mid "$mf_work" > "$mf_work/since" 2> /dev/null
peak=$(grep '^  peak' "$mf_work/since")
like "$peak" "^  peak of the whole run, not of these counts .*: [0-9.]+ [KMG]?i?B live" \
	"--since mid: the peak said to be the whole run's ($peak)"
is "$(echo "$peak" | grep -c ' blocks')" 0 "--since mid: no count of blocks beside it"

# one of each: a block leaked, and a free of a block the profiler never saw allocated (glibc's
# own entry point, which the profiler does not interpose)
cat > "$mf_work/one.c" << 'PROG'
#include <stdlib.h>
extern void *__libc_malloc(size_t);
int main(void)
{
	void *kept = malloc(5);
	free(__libc_malloc(8));
	return kept == NULL;
}
PROG
$CC -O1 -g -fno-builtin -o "$mf_work/one" "$mf_work/one.c" || bail "cannot build one.c"
mkdir "$mf_work/one.d"
MALLOC_FREQ_LIFETIMES=1 MALLOC_FREQ_DIR="$mf_work/one.d" LD_PRELOAD="$MF_LIB" "$mf_work/one"
is "$?" 0 "a program that leaks one block runs with lifetimes"
one=$("$MF_PRINT" "$mf_work/one.d" 2> /dev/null | grep '^  lifetimes: ')
like "$one" "^  lifetimes: 1 block \\(5 B\\) not freed at the end .*; 1 free of a block never seen allocated\$" \
	"one leaked block and one unknown free, each said in the singular ($one)"
done_testing
