#!/bin/sh
# What the text reports say around the numbers, on a program built here from main.c and two
# files of one base name, a/mod.c (30 calls) and b/mod.c (20 calls), run by a shell (two
# processes), with lifetimes, and once sampled:
# - the tree names each file by enough of its path to tell the two mod.c apart (a/mod.c,
#   b/mod.c), a file whose base name is its own by that alone (main.c);
# - --threshold 0 folds nothing, and no heading says that paths below 0% are folded;
# - a sampled run's counts by allocation function carry the "~" its headline has;
# - a report that needs lifetimes, on a profile without them, names the launcher's --lifetimes;
# - --list names each process's program and pid.
. "$srcdir/tests/tap.sh"
mkdir -p "$mf_work/src/a" "$mf_work/src/b"
cat > "$mf_work/src/main.c" << 'PROG'
#include <stdlib.h>
#include "malloc_freq.h"
#pragma weak malloc_freq_snapshot
void mod_a(int n);
void mod_b(int n);
int main(void)
{
	mod_a(30);
	if (malloc_freq_snapshot && malloc_freq_snapshot("half") < 0)
		return 1;
	mod_b(20);
	return 0;
}
PROG
for m in a b; do
	cat > "$mf_work/src/$m/mod.c" << PROG
#include <stdlib.h>
static void *volatile sink;
__attribute__((noinline)) void mod_$m(int n)
{
	for (int i = 0; i < n; i++) {
		free(sink);
		sink = malloc(sizeof(long) * $([ $m = a ] && echo 2 || echo 3));
	}
}
PROG
done
(cd "$mf_work/src" && $CC -O1 -g -fno-omit-frame-pointer -fno-builtin -I"$srcdir/include" \
	-o "$mf_work/p" main.c a/mod.c b/mod.c) || bail "cannot build the program"
prog=$mf_work/p
run() { # run DIR [ENV...]: the program, by a shell, profiled into DIR
	d=$mf_work/$1; shift; mkdir "$d"
	env MALLOC_FREQ_DIR="$d" LD_PRELOAD="$MF_LIB" "$@" sh -c "\"$prog\"; exit 0"
}
run plain; ok $? "the program runs under the profiler, by a shell"
run life MALLOC_FREQ_LIFETIMES=1; ok $? "and with lifetimes"
run sampled MALLOC_FREQ_SAMPLE=3 MALLOC_FREQ_SEED=5; ok $? "and sampled"
plain=$mf_work/plain life=$mf_work/life sampled=$mf_work/sampled

# file names
"$MF_PRINT" -t 0 "$plain" > "$mf_work/tree" 2> /dev/null
like "$(cat "$mf_work/tree")" ' mod_a a/mod\.c:[0-9]+$' "the tree: mod_a in a/mod.c"
like "$(cat "$mf_work/tree")" ' mod_b b/mod\.c:[0-9]+$' "the tree: mod_b in b/mod.c"
like "$(cat "$mf_work/tree")" ' main main\.c:[0-9]+$' "the tree: main in main.c, its base name alone"
"$MF_PRINT" --collapsed --lines "$plain" > "$mf_work/lines" 2> /dev/null
is "$(calls "$mf_work/lines" 'mod_a a/mod\.c:[0-9]+;malloc$') $(calls "$mf_work/lines" 'mod_b b/mod\.c:[0-9]+;malloc$')" \
	"30 20" "--collapsed --lines: the same names, 30 and 20 calls"

# --threshold 0
for args in "" "--caller" "--threads" "--histogram" "--diff $plain"; do
	"$MF_PRINT" -t 0 $args "$plain" > "$mf_work/out" 2> /dev/null
	is "$?:$(grep -c 'folded\|below 0%' "$mf_work/out")" "0:0" "-t 0 ${args:---}: nothing said of folding"
done
"$MF_PRINT" -t 0 --leaks "$life" > "$mf_work/out" 2> /dev/null
is "$?:$(grep -c 'folded\|below 0%' "$mf_work/out")" "0:0" "-t 0 --leaks: nothing said of folding"
# (two programs, the shell and p, where the shell, the machine's own, takes the library)
if native "the default threshold: the programs (the shell's too) and the tree say what they fold"; then
	"$MF_PRINT" "$plain" > "$mf_work/out" 2> /dev/null
	is "$(grep -c 'below 1% .*folded\|below 1% are folded' "$mf_work/out")" 2 \
		"the default threshold: the programs and the tree say what they fold"
fi

# a sampled run's counts by function
"$MF_PRINT" "$sampled" > "$mf_work/out" 2> /dev/null
like "$(head -1 "$mf_work/out")" '^malloc_freq: ~[0-9]+ calls' "sampled: the headline's count is an estimate"
by=$(sed -n 's/^  by function: //p' "$mf_work/out")
like "$by" '^malloc ~[0-9]+ ' "sampled: so is malloc's count by function"
is "$(echo "$by" | tr ',' '\n' | grep -vc ' ~[0-9]')" 0 "sampled: every count by function has its ~ ($by)"
"$MF_PRINT" "$plain" > "$mf_work/out" 2> /dev/null
is "$(grep -c '~' "$mf_work/out")" 0 "unsampled: no ~ anywhere"

# reports that need lifetimes
for args in "--leaks" "--sort leaked" "--collapsed --weight peak"; do
	"$MF_PRINT" $args "$plain" > /dev/null 2> "$mf_work/err"
	like "$?:$(cat "$mf_work/err")" "^1:mf_print: .*no lifetimes \(record them with malloc_freq --lifetimes, or MALLOC_FREQ_LIFETIMES=1\)$" \
		"$args without lifetimes: names the launcher's --lifetimes"
done

# --list
"$MF_PRINT" --list "$plain" > "$mf_work/list" 2> "$mf_work/err"
is "$?:$(cat "$mf_work/err")" "0:" "--list: exits 0"
pid=$(ls "$plain" | sed -n 's/^malloc_freq\.\([0-9]*\)$/\1/p' | sort -n | tail -1)
like "$(cat "$mf_work/list")" "^ +1 .* p $pid  half, .*/malloc_freq\.$pid/snap\.1\.half$" \
	"--list: snapshot half, of program p, pid $pid"
if native "--list: the shell's directory (the machine's own shell)"; then
	shpid=$(ls "$plain" | sed -n 's/^malloc_freq\.\([0-9]*\)$/\1/p' | sort -n | head -1)
	like "$(cat "$mf_work/list")" "^ +- +(sh|dash) $shpid  .*/malloc_freq\.$shpid: no snapshots$" \
		"--list: the shell, pid $shpid, has none"
fi
done_testing
