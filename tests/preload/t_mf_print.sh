#!/bin/sh
# mf_print on bad input: every error names the input and what is wrong; exit 1 for bad input
# (the good files are still reported), 2 for usage.
. "$srcdir/tests/tap.sh"
# ready FILE: waits (20 s at most) for prog_kill's "ready" in FILE, said once its file is made
# (a fixed pause was too short under load, and under qemu-user)
ready() {
	i=0
	while ! grep -q ready "$1" 2> /dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
}
env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_kill" 0 > "$mf_work/ready" &
pid=$!; ready "$mf_work/ready"; kill -9 $pid; wait $pid 2>/dev/null
good=$mf_work/malloc_freq.$pid
prof=$(ls "$good"/*.prof | head -1)
[ -f "$prof" ] || bail "no profile to corrupt"
# check DESC WANT_STATUS STDERR_REGEX ARGS...
check() {
	desc=$1 want=$2 re=$3; shift 3
	"$MF_PRINT" "$@" > "$mf_work/out" 2> "$mf_work/err"; rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$re" "$mf_work/err"; then pass "$desc"; else
		fail "$desc (exit $rc, want $want)"
		sed 's/^/#   stderr: /' "$mf_work/err" | head -5
		echo "#   want: /$re/"
	fi
}
# The threshold each report says it folds below is the one given (it said 1e+02% and 0.12%)
for t in 100 0.125 88.61; do
	said=$(for o in "" --threads --histogram; do "$MF_PRINT" $o --threshold $t "$good"; done 2> /dev/null |
		grep -o 'below [^ ]*%' | sort -u | tr '\n' ' ')
	is "$said" "below $t% " "--threshold $t: the tree, --threads and --histogram say 'below $t%'"
done
bad() { # NAME: a copy of the good directory to corrupt
	rm -rf "$mf_work/$1"; cp -r "$good" "$mf_work/$1"; echo "$mf_work/$1"
}
patch() { # FILE OFFSET OCTAL-BYTE
	printf "\\$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
check "missing directory" 1 "^mf_print: $mf_work/nope: No such file or directory" --dir "$mf_work/nope"
mkdir "$mf_work/empty"
check "empty directory" 1 "^mf_print: $mf_work/empty: no profiles here" "$mf_work/empty"
check "a file instead of a directory" 1 "^mf_print: $prof: not a directory" "$prof"
d=$(bad magic); f=$(ls "$d"/*.prof); patch "$f" 0 101
check "not a profile (bad magic)" 1 "^mf_print: $f: not a malloc_freq file \(bad magic\)" "$d"
d=$(bad version); f=$(ls "$d"/*.prof); patch "$f" 8 015
check "a newer format version is named as such" 1 "^mf_print: $f: format version 13, newer than this mf_print reads \(1 to 12\): read it with the mf_print of the malloc_freq that wrote it" "$d"
d=$(bad order); f=$(ls "$d"/*.prof); patch "$f" 12 001; patch "$f" 13 002; patch "$f" 14 003; patch "$f" 15 004
check "other byte order" 1 "^mf_print: $f: written on a machine of the other byte order" "$d"
d=$(bad short); f=$(ls "$d"/*.prof); head -c 100 "$prof" > "$f"
check "truncated header" 1 "^mf_print: $f: truncated: 100 bytes" "$d"
d=$(bad nodes); f=$(ls "$d"/*.prof); head -c $((12288 + 32 * 3)) "$prof" > "$f"
check "truncated nodes" 1 "^mf_print: $f: truncated: the header counts [0-9]+ nodes, the file holds 3: the [0-9]+ before the cut are read" "$d"
# A file cut in the middle of its nodes (a copy that stopped): the whole leaves before the cut
# are read, counted as the format says (python3 reads it apart: 32-byte nodes after the 12288-byte
# header; a leaf, module 0xffffffff, is followed by 2 slots, and 18 more with lifetimes)
if command -v python3 > /dev/null 2>&1; then
	mkdir "$mf_work/deep"
	MALLOC_FREQ_DIR="$mf_work/deep" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_deep" 2 > /dev/null
	whole=$(ls "$mf_work"/deep/malloc_freq.*/*.prof)
	d=$mf_work/half; cp -r "$(dirname "$whole")" "$d"; f=$d/$(basename "$whole")
	nodes=$(python3 -c 'import struct, sys; print(struct.unpack_from("<Q", open(sys.argv[1], "rb").read(), 56)[0])' "$whole")
	head -c $((12288 + 32 * (nodes / 2) + 7)) "$whole" > "$f"
	want=$(python3 - "$f" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
records = struct.unpack_from("<I", data, 132)[0]
n, i, calls = (len(data) - 12288) // 32, 1, 0
while i < n:
    rel_pc, parent, module, c, b = struct.unpack_from("<QIIQQ", data, 12288 + 32 * i)
    after = 2 + (18 if records & 1 else 0) if module == 0xffffffff else 17 if module == 0xfffffffa else 0
    if i + after >= n:
        break
    calls += c if module == 0xffffffff else 0
    i += 1 + after
print(calls)
PY
)
	"$MF_PRINT" --collapsed "$d" > "$mf_work/c.txt" 2> "$mf_work/err"; rc=$?
	got=$(awk '{ s += $NF } END { print s + 0 }' "$mf_work/c.txt")
	is "$rc:$got" "1:$want" "a file cut in its middle: exit 1, and the $want calls of its whole leaves before the cut (of 2000)"
	[ "$want" -gt 0 ] && [ "$want" -lt 2000 ]; ok $? "... which are some and not all"
	like "$(cat "$mf_work/err")" "^mf_print: $f: truncated: the header counts $nodes nodes, the file holds $((nodes / 2)): the [0-9]+ before the cut are read, the calls of the rest are lost" "... and the error says what was read"
else
	skip "a file cut in its middle: no python3 to read it apart"
fi
# a link to a process directory beside it: read once, and said (it was counted twice)
mkdir "$mf_work/linked" && cp -r "$good" "$mf_work/linked/"
# (one named before it, one after: the directory is the one reached without a link)
ln -s "$(basename "$good")" "$mf_work/linked/malloc_freq.1"
ln -s "$(basename "$good")" "$mf_work/linked/malloc_freq.99999"
"$MF_PRINT" "$mf_work/linked" > "$mf_work/out" 2> "$mf_work/err"; rc=$?
is "$rc:$(sed -n 1p "$mf_work/out")" "0:$("$MF_PRINT" "$good" 2> /dev/null | sed -n 1p)" \
	"links to a process directory beside it: the process read once (the summary of its directory alone)"
is "$(cat "$mf_work/err")" "mf_print: warning: $mf_work/linked/malloc_freq.1: the same directory as $mf_work/linked/$(basename "$good"); read once
mf_print: warning: $mf_work/linked/malloc_freq.99999: the same directory as $mf_work/linked/$(basename "$good"); read once" \
	"... and each link is named"
# A sparse 4 GiB thread file whose header counts the 134 million nodes its size has room
# for, of which the file holds a few (the rest are holes: zeros, never written). It was read
# silently, at 4.1 GB of memory: the count is refused as more than the file holds, the
# nodes it does hold are read, and memory stays small.
if command -v python3 > /dev/null 2>&1 && [ -x /usr/bin/time ]; then
	d=$(bad sparse); f=$(ls "$d"/*.prof)
	python3 - "$f" <<'PY'
import os, struct, sys
f = sys.argv[1]
size = 4 << 30
with open(f, "r+b") as out:
    out.seek(56)
    out.write(struct.pack("<Q", (size - 12288) // 32))
os.truncate(f, size)
PY
	within 120 /usr/bin/time -f '%M' -o "$mf_work/rss" "$MF_PRINT" --collapsed "$d" > "$mf_work/c.txt" 2> "$mf_work/err"; rc=$?
	rss=$(tail -1 "$mf_work/rss")
	like "$rc $(cat "$mf_work/err")" "^1 mf_print: $f: the header counts 134217344 nodes, the file holds [0-9]+ \(node [0-9]+ on is zeros, never written\): the [0-9]+ before are read$" \
		"a sparse file counting 134 million nodes: exit 1, and the count named as more than the file holds"
	is "$(awk '{ s += $NF } END { print s + 0 }' "$mf_work/c.txt")" "$("$MF_PRINT" --collapsed "$good" 2> /dev/null | awk '{ s += $NF } END { print s + 0 }')" \
		"... the calls of the nodes it holds are read"
	[ "${rss:-999999}" -lt 100000 ]; ok $? "... in little memory (${rss:-?} KiB at most, not the file's 4 GiB)"
else
	skip "a sparse file of 4 GiB: no python3 or /usr/bin/time"
fi
# Frames in the vdso (a signal handler that allocates, having interrupted clock_gettime
# there): named by the vdso's own functions when the kernel's vdso is this one's (read from
# mf_print's own memory), and never a warning that "linux-vdso.so.1" cannot be opened.
cat > "$mf_work/vdso.c" <<'C'
#define _GNU_SOURCE /* REG_RIP */
#include <elf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
static void *volatile sink;
static volatile sig_atomic_t in_vdso, elsewhere;
static unsigned long lo, hi;
__attribute__((noinline)) static void site_vdso(void) { sink = malloc(24); free(sink); }
__attribute__((noinline)) static void site_other(void) { sink = malloc(40); free(sink); }
static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	unsigned long pc = (unsigned long)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	(void)sig, (void)si;
	if (pc >= lo && pc < hi && in_vdso < 50)
		site_vdso(), in_vdso++;
	else
		site_other(), elsewhere++;
}
int main(void)
{
	const Elf64_Ehdr *e = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (!e)
		return 77;
	const Elf64_Phdr *ph = (const void *)((const char *)e + e->e_phoff);
	lo = (unsigned long)e;
	for (int i = 0; i < e->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && lo + ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = lo + ph[i].p_vaddr + ph[i].p_memsz;
	free(malloc(24)), free(malloc(40));
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 200}, {0, 200}};
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec ts;
	while (in_vdso < 50)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("in the vdso %d\n", (int)in_vdso);
	return 0;
}
C
if $CC -O1 -g -o "$mf_work/vdsoclock" "$mf_work/vdso.c" 2> /dev/null; then
	mkdir "$mf_work/vdsop"
	out=$(within 60 env MALLOC_FREQ_DIR="$mf_work/vdsop" LD_PRELOAD="$MF_LIB" "$mf_work/vdsoclock"); rc=$?
	"$MF_PRINT" --collapsed "$mf_work/vdsop" > "$mf_work/c.txt" 2> "$mf_work/err"
	is "$rc:$out:$(grep -ci vdso "$mf_work/err")" "0:in the vdso 50:0" "a handler's 50 calls from inside the vdso: no warning about it"
	is "$(calls "$mf_work/c.txt" ';(__vdso_)?clock_gettime;([^;]*;)*on_alarm;site_vdso;malloc$')" 50 \
		"... and its frames named by the vdso's function, clock_gettime"
	# another kernel's vdso (its build-id changed in the module map: a module record is 56
	# bytes, its build-id 32 bytes in, its path after it)
	if command -v python3 > /dev/null 2>&1; then
		python3 - "$mf_work"/vdsop/malloc_freq.*/modules <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
at = data.index(b"linux-vdso") - 56 + 32
data[at:at + 4] = bytes(b ^ 0xff for b in data[at:at + 4])
open(sys.argv[1], "wb").write(data)
PY
		"$MF_PRINT" --collapsed "$mf_work/vdsop" > "$mf_work/c.txt" 2> "$mf_work/err"; rc=$?
		is "$rc:$(grep -ci vdso "$mf_work/err"):$(calls "$mf_work/c.txt" ';[[]vdso[]][+]0x[0-9a-f]+;([^;]*;)*on_alarm;site_vdso;malloc$')" "0:0:50" \
			"another kernel's vdso: its frames [vdso]+0xOFF, and nothing said"
	else
		skip "another kernel's vdso: no python3 to change its build-id"
	fi
else
	skip "the vdso program (x86-64's: its handler reads REG_RIP) does not build with $CC"
fi
# The frame a signal interrupted is that instruction, not a return address: a fault on the first
# instruction of a function is named by that function, not by the one before it (which a
# lookup of pc - 1 finds), and the handler's frames sit on the signal return above it.
cat > "$mf_work/first.c" <<'C'
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
long before_first(long *p);
long fault_first(long *p);
__asm__(".text\n.globl before_first\n.type before_first,@function\nbefore_first:\n.cfi_startproc\n"
#if defined(__x86_64__)
	"movq %rdi, %rax\nret\n"
#elif defined(__aarch64__)
	"ret\n"
#endif
	".cfi_endproc\n.size before_first, .-before_first\n"
	".globl fault_first\n.type fault_first,@function\nfault_first:\n.cfi_startproc\n"
#if defined(__x86_64__)
	"movq (%rdi), %rax\nret\n"
#elif defined(__aarch64__)
	"ldr x0, [x0]\nret\n"
#endif
	".cfi_endproc\n.size fault_first, .-fault_first\n");
static void *volatile sink;
static sigjmp_buf back;
__attribute__((noinline)) static void site_fault(void) { sink = malloc(24); free(sink); }
static void on_segv(int sig) { (void)sig; site_fault(); siglongjmp(back, 1); }
int main(void)
{
	static volatile int faults;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	before_first(NULL);
	while (faults < 20)
		if (!sigsetjmp(back, 1))
			fault_first(NULL);
		else
			faults++;
	printf("faults %d\n", (int)faults);
	return 0;
}
C
# (an arm64 handler returns to the vdso's __kernel_rt_sigreturn; qemu-user 7 gives no vdso, and
# its own signal return, in memory no file maps, cannot be known from the profile)
if ! $CC -O1 -g -o "$mf_work/first" "$mf_work/first.c" 2> /dev/null; then
	skip "no $CC to build the program that faults on a function's first instruction"
elif [ "$mf_arch" = aarch64 ] && ! LD_SHOW_AUXV=1 "$mf_work/first" | grep -q '^AT_SYSINFO_EHDR'; then
	skip "a fault on a function's first instruction: no vdso here, whose signal return tells the frame (qemu-user before 8.1)"
else
	mkdir "$mf_work/firstp"
	out=$(within 60 env MALLOC_FREQ_DIR="$mf_work/firstp" LD_PRELOAD="$MF_LIB" "$mf_work/first"); rc=$?
	"$MF_PRINT" --collapsed "$mf_work/firstp" > "$mf_work/c.txt" 2> /dev/null
	is "$rc:$out:$(calls "$mf_work/c.txt" ';main;fault_first;[^;]*;on_segv;site_fault;malloc$')" \
		"0:faults 20:20" "a fault on a function's first instruction: 20 handler calls, its frame named by that function"
fi
d=$(bad zero); f=$(ls "$d"/*.prof); : > "$f"; cp "$prof" "$d/77777.prof"
check "an empty file (killed while it was made): a warning, the rest reported" 0 "^mf_print: warning: $f: empty: the thread was stopped while its file was being made" "$d"
d=$(bad nohdr); f=$(ls "$d"/*.prof); head -c 12288 /dev/zero > "$f"; cp "$prof" "$d/77777.prof"
check "a file with no header yet: the same" 0 "^mf_print: warning: $f: no header: the thread was stopped" "$d"
d=$(bad onlyzero); f=$(ls "$d"/*.prof); : > "$f"
# in the directory of a process still running, such a file is one being made: not a loss (a
# live read warned that its thread was stopped)
env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$MF_TESTS/prog_kill" 0 > "$mf_work/live" &
live=$!; ready "$mf_work/live"
head -c 12288 /dev/zero > "$mf_work/malloc_freq.$live/99998.prof"
"$MF_PRINT" "$mf_work/malloc_freq.$live" > /dev/null 2> "$mf_work/err"; rc=$?
kill -9 $live; wait $live 2> /dev/null
is "$rc:$(cat "$mf_work/err")" "0:" "a running process's file with no header yet: being made, no warning"
check "... once it has ended, the warning" 0 "^mf_print: warning: $mf_work/malloc_freq.$live/99998.prof: no header: the thread was stopped" "$mf_work/malloc_freq.$live"
check "only such files: nothing to report, exit 1" 1 "warning: $f: empty" "$d"
# node_count is the header's 8 bytes at 56: 0 nodes, and the calls it counts (a thread killed
# while its file was made has neither)
d=$(bad nonode); f=$(ls "$d"/*.prof); for i in 0 1 2 3 4 5 6 7; do patch "$f" $((56 + i)) 000; done
check "calls counted, and no node" 1 "^mf_print: $f: corrupt header \([0-9]+ calls, and no node\)" "$d"
d=$(bad parent); f=$(ls "$d"/*.prof); patch "$f" $((12288 + 32 * 2 + 8)) 077
check "a node whose parent is not before it" 1 "^mf_print: $f: corrupt node 2 \(parent" "$d"
d=$(bad modules); patch "$d/modules" 0 101
check "a bad module map is named" 1 "$d/modules: not a malloc_freq file \(bad magic\); frames are shown as module\+offset" "$d"
# a module record is 56 bytes after the 64-byte header; its path length is its last 4
d=$(bad modpath); patch "$d/modules" 116 377; patch "$d/modules" 117 377
check "a module path longer than any path is named" 1 "$d/modules: corrupt module 0 \(path of 65535 bytes\)" "$d"
d=$(bad modshort); head -c $(($(wc -c < "$good/modules") - 4)) "$good/modules" > "$d/modules"
check "a module path cut short is named" 1 "$d/modules: truncated: the path of module [0-9]+ is cut short: the [0-9]+ before the cut are read" "$d"
# (the stacks lie in the modules before the last: named as with the whole map)
is "$("$MF_PRINT" --collapsed "$d" 2> /dev/null)" "$("$MF_PRINT" --collapsed "$good" 2> /dev/null)" "... and the modules before the cut name the frames, as with the whole map"
d=$(bad modcut); head -c 100 "$good/modules" > "$d/modules"
check "a module map cut short is named" 1 "$d/modules: truncated: the header counts [0-9]+ modules, the file holds 0" "$d"
# A program without a build-id, rebuilt after the run: nothing but its time tells the file is
# not the one profiled; it is said, and its frames are module+offset, not another build's names
mkdir "$mf_work/rebuilt"
printf '#include <stdlib.h>\nvoid *volatile s;\n__attribute__((noinline)) void alpha(void) { s = malloc(10); }\nint main(void) { for (int i = 0; i < 101; i++) alpha(); return 0; }\n' > "$mf_work/rebuilt/v1.c"
printf '#include <stdio.h>\n#include <stdlib.h>\nvoid *volatile s;\n__attribute__((noinline)) void other(int k) { s = calloc(1, k); printf("%%d", k); }\nint main(void) { other(3); return 0; }\n' > "$mf_work/rebuilt/v2.c"
if $CC -O2 -g -Wl,--build-id=none -o "$mf_work/rebuilt/prog" "$mf_work/rebuilt/v1.c" 2> /dev/null; then
	mkdir "$mf_work/rebuilt/p"
	MALLOC_FREQ_DIR="$mf_work/rebuilt/p" LD_PRELOAD="$MF_LIB" "$mf_work/rebuilt/prog"
	"$MF_PRINT" --collapsed "$mf_work/rebuilt/p" > "$mf_work/c1.txt" 2> /dev/null
	is "$(calls "$mf_work/c1.txt" ';main;alpha;malloc$')" 101 "a program without a build-id: alpha's 101 calls, named"
	sleep 0.1
	$CC -O2 -g -Wl,--build-id=none -o "$mf_work/rebuilt/prog" "$mf_work/rebuilt/v2.c"
	"$MF_PRINT" --collapsed "$mf_work/rebuilt/p" > "$mf_work/c2.txt" 2> "$mf_work/err"; rc=$?
	is "$rc:$(calls "$mf_work/c2.txt" ';prog\+0x[0-9a-f]+;malloc$')" "0:101" "rebuilt after the run: the 101 calls' frames are prog+offset, not another build's names"
	like "$(cat "$mf_work/err")" "$mf_work/rebuilt/prog: (its segments are not those of the profiled process's|written after the profiled processes ended) \(it has no build-id" "... and the file named as changed since the run"
	# (built again from the same source: the same segments; only its time tells)
	$CC -O2 -g -Wl,--build-id=none -o "$mf_work/rebuilt/prog" "$mf_work/rebuilt/v1.c"
	"$MF_PRINT" --collapsed "$mf_work/rebuilt/p" > /dev/null 2> "$mf_work/err"
	like "$(cat "$mf_work/err")" "$mf_work/rebuilt/prog: written after the profiled processes ended" "built again with the same segments: its time says it changed since the run"
else
	skip "no $CC with --build-id=none"
fi
d=$(bad nomap); rm "$d/modules"
check "a missing module map is a warning, the report goes on" 0 "$d/modules: No such file or directory; frames are shown as module\+offset" "$d"
like "$(cat "$mf_work/out")" "^malloc_freq: [0-9]+ calls" "... and the report is printed"
d=$(bad mixed); cp "$prof" "$d/99999.prof"; patch "$d/99999.prof" 0 101
check "one bad file among good ones: exit 1" 1 "$d/99999.prof: not a malloc_freq file" "$d"
like "$(cat "$mf_work/out")" "^malloc_freq: [0-9]+ calls" "... and the good files are still reported"
check "--threshold not a number" 2 "^mf_print: --threshold 'abc': give a percentage from 0 to 100" --threshold abc "$good"
check "--threshold out of range" 2 "^mf_print: --threshold '101'" --threshold 101 "$good"
check "--sort unknown key" 2 "^mf_print: --sort 'size': give 'calls', 'bytes', 'time', 'temporary', 'leaked', 'leaked-blocks', 'peak', 'peak-blocks', 'short', 'max-live', 'max-live-blocks', 'freed' or 'lifetime'" --sort size "$good"
check "unknown option" 2 "^mf_print: unknown option '--frobnicate'" --frobnicate "$good"
# a long option given a value it takes none of is named as given (it read "unknown option '-c'"
# for --caller=1, and a control byte for --json=1); a prefix of several options says so
check "--caller=1: --caller takes no value" 2 "^mf_print: --caller takes no value$" --caller=1 "$good"
check "--json=1: named, not a byte" 2 "^mf_print: --json takes no value$" --json=1 "$good"
check "--list with --pprof: refused (no pprof profile was written)" 2 "^mf_print: --list names every snapshot of every process; it does not go with .*--pprof" --list --pprof "$mf_work/l.pb.gz" "$good"
check "--list with --process: refused (it listed every process)" 2 "^mf_print: --list .* does not go with .*--process$" --list --process nosuch "$good"
check "--html - with --pprof -: refused (one stdout)" 2 "^mf_print: --html - and --pprof - would both go to stdout" --html - --pprof - "$good"
# --pprof - with --html FILE: the page to its file, the pprof profile alone on stdout (it was
# dropped: nothing on stdout)
"$MF_PRINT" --pprof - "$good" > "$mf_work/alone.pb.gz" 2> /dev/null
"$MF_PRINT" --html "$mf_work/p.html" --pprof - "$good" > "$mf_work/both.pb.gz" 2> /dev/null; rc=$?
[ "$rc" = 0 ] && [ -s "$mf_work/p.html" ] && [ -s "$mf_work/both.pb.gz" ] && cmp -s "$mf_work/alone.pb.gz" "$mf_work/both.pb.gz"
ok $? "--html FILE --pprof -: the page written, and stdout holds the pprof profile --pprof - alone gives"
check "--thr: the start of more than one option" 2 "^mf_print: '--thr' is the start of more than one option$" --thr 1 "$good"
check "missing option value" 2 "^mf_print: --dir needs a value" --dir
check "no directory" 2 "^mf_print: no profile directory given" --threshold 1
check "two reports at once" 2 "^mf_print: choose one of --collapsed, --threads, --processes, --json, --dot, --list, --tags, --timeline and --html" --collapsed --threads "$good"
check "--thread not a number" 2 "^mf_print: --thread 'x'" --thread x "$good"
check "--process with nothing to match" 2 "^mf_print: --process '': give a pid or a program name" --process "" "$good"
check "--process that matches nothing: exit 3, and the programs there are named" 3 "^mf_print: no process here is nosuchprog \(--process\); the programs are: prog_kill" --process nosuchprog "$good"
check "--thread that matches nothing: exit 3" 3 "^mf_print: no thread with id 1 in the profiles read" --thread 1 "$good"
# What programs may do to the report: request more than 2^64 bytes in all (4 x 2^63: it used
# to wrap to 0), or name a thread with a terminal escape and a newline.
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_tree" huge 4
out=$("$MF_PRINT" "$mf_work"/malloc_freq.* 2> /dev/null)
like "$out" "^malloc_freq: 8 calls, at least 16.0 EiB requested" "requests beyond 2^64 bytes: the sum stops at 16 EiB, says 'at least'"
like "$out" "some sums reached 2\^64 - 1" "... and the summary says why"
rm -rf "$mf_work"/malloc_freq.*
profile "$MF_TESTS/prog_tree" name 30
"$MF_PRINT" --threads "$mf_work"/malloc_freq.* > "$mf_work/out" 2> /dev/null
is "$(grep -c "$(printf '\033')" "$mf_work/out")" 0 "a thread name's escape sequence does not reach the terminal"
like "$(cat "$mf_work/out")" '^ +\\x1b\[31m\\nx  thread name' "... it is shown escaped, on its own line of the table"
like "$(cat "$mf_work/out")" '^ +30 +30  site_tree ' "... and the table's rows are whole"
"$MF_PRINT" --help > "$mf_work/help"; rc=$?
is "$rc" 0 "--help exits 0"
for o in --dir --threshold --sort --caller --collapsed --threads --processes --bytes --lines --thread \
	--process --merge-processes --full-names --debuginfod --verbose --version; do
	grep -q -- "$o" "$mf_work/help" || missing="$missing $o"
done
is "${missing:-}" "" "--help documents every option"
like "$("$MF_PRINT" --version)" "^mf_print \(malloc_freq\) [0-9]" "--version"
done_testing
