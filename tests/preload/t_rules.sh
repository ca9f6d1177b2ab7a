#!/bin/sh
# The rule cache: a run leaves the frame rules libunwind confirmed in
# <MALLOC_FREQ_CACHE>/<build-id>.rules, and a later run of the program that needs no other rule
# counts the same by them, without reading .eh_frame or loading libunwind. A damaged file, or
# one of another user, is named on stderr, not used, and replaced; "off" writes nothing; the
# default place is $XDG_CACHE_HOME, else ~/.cache.
. "$srcdir/tests/tap.sh"
cache="$mf_work/cache"
prog="$MF_TESTS/prog_sites"
id=$(readelf -n "$prog" | sed -n 's/.*Build ID: *//p')
file="$cache/$id.rules"
[ -n "$id" ] || bail "no build-id in $prog"

# report NAME [ENV ARGS...]: prog_sites profiled, its sorted collapsed report in NAME.txt and
# its stderr in NAME.err
report() {
	name=$1; shift
	rm -rf "$mf_work"/malloc_freq.*
	env "$@" MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$prog" > /dev/null 2> "$mf_work/$name.err"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* 2> /dev/null | sort > "$mf_work/$name.txt"
}
# valid FILE: the header's magic and entry count agree with the file's size (16 bytes an entry)
valid() {
	count=$(od -An -t u8 -j 16 -N 8 "$1" 2> /dev/null | tr -d ' ')
	[ "$(head -c 6 "$1" 2> /dev/null)" = MFRULE ] && [ "${count:-0}" -gt 0 ] &&
		[ "$(wc -c < "$1")" -eq $((48 + 16 * count)) ]
}
# libunwind_in [VAR=VALUE...]: "loaded" if a profiled cat finds libunwind among its mappings
# (cat writes to a file: cut short by SIGPIPE, it would not reach exit and save the cache)
libunwind_in() {
	env MALLOC_FREQ_DIR="$mf_work" LD_PRELOAD="$MF_LIB" "$@" cat /proc/self/maps > "$mf_work/maps"
	grep -q 'libunwind' "$mf_work/maps" && echo loaded || echo absent
}

report cold MALLOC_FREQ_CACHE="$cache"
[ -s "$mf_work/cold.txt" ]; ok $? "a first run is profiled ($(wc -l < "$mf_work/cold.txt") stacks)"
valid "$file"; ok $? "it leaves $id.rules, whole (${count:-no} rules)"
cold_count=$count
report warm MALLOC_FREQ_CACHE="$cache"
cmp -s "$mf_work/cold.txt" "$mf_work/warm.txt"; ok $? "a second run, going by the cache, counts the same"
is "$(cat "$mf_work/warm.err")" "" "and says nothing"
valid "$file"; is "$count" "$cold_count" "it adds no rule (nothing new was confirmed)"
is "$(ls "$cache" | grep -v '\.rules$')" "" "no file but the caches is left in the directory"

if native "cat's runs (this machine's cat)"; then
	is "$(libunwind_in MALLOC_FREQ_CACHE="$cache")" loaded "a first run of cat needs libunwind, and loads it"
	is "$(libunwind_in MALLOC_FREQ_CACHE="$cache")" absent "the second run of cat does without it"
	is "$(libunwind_in MALLOC_FREQ_CACHE="$cache" MALLOC_FREQ_UNWIND=libunwind)" loaded "MALLOC_FREQ_UNWIND=libunwind loads it at start"
fi

# A run the cache says needs nothing more from libunwind does not load it, even when it meets
# a new call site (between the program's failed dlopen and its dlerror(), here): the site's
# rules are used as read, and the next run loads libunwind to confirm them.
dlerr() {
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_CACHE="$cache" profile "$MF_TESTS/prog_rules" dlerror "$@"
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* 2> /dev/null > "$mf_work/dlerr.txt"
}
dlerr > /dev/null
is "$(dlerr)" "failed, message kept, libunwind absent" "a second run does without libunwind"
is "$(dlerr new)" "failed, message kept, libunwind absent" "a new call site in a run without libunwind: the program's dlerror() message is kept"
is "$(calls "$mf_work/dlerr.txt" '^_start;[^;]*;([^;]*;)?main;new_site;malloc$')" 1 "and its stack is whole, by the rules as read"
is "$(dlerr new)" "failed, message kept, libunwind loaded" "the next run loads libunwind at start, to confirm them"
is "$(dlerr new)" "failed, message kept, libunwind absent" "and the one after does without it again"

# A program whose stacks need libunwind every time (through a signal trampoline): every run
# loads it, and every run has those stacks whole. (Its own cache: with the one above, which
# the dlerror runs left complete, the first of these runs would go without, and count those
# stacks without their frames.)
whole=0 loads=0
for i in 1 2 3 4; do
	rm -rf "$mf_work"/malloc_freq.*
	MALLOC_FREQ_CACHE="$mf_work/cache-sig" LD_DEBUG=files profile "$MF_TESTS/prog_rules" signal 50 2> "$mf_work/ld.err"
	grep -q 'file=libunwind.so.8 .*dynamically loaded' "$mf_work/ld.err" && loads=$((loads + 1))
	"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* 2> /dev/null > "$mf_work/sig.txt"
	[ "$(calls "$mf_work/sig.txt" '^_start;.*;main;.*;in_handler;malloc$')" = 50 ] && whole=$((whole + 1))
done
is "$loads:$whole" "4:4" "a signal handler's stacks: libunwind loaded in each of 4 runs, and the stacks whole in each"

# damaged caches: named, not used, replaced by a whole one; the profile is the same
damaged() {
	desc=$1 why=$2
	report damaged MALLOC_FREQ_CACHE="$cache"
	like "$(cat "$mf_work/damaged.err")" "^malloc_freq: rule cache $file: ($why); not used, and replaced at exit if it can be$" "$desc: named on stderr"
	cmp -s "$mf_work/cold.txt" "$mf_work/damaged.txt"; ok $? "$desc: the same profile"
	valid "$file"; ok $? "$desc: replaced by a whole cache (${count:-no} rules)"
}
echo "not a cache at all, just some text" > "$file"
damaged "text" "not a rule cache"
cp "$file" "$mf_work/whole.rules"
head -c $((48 + 16 * cold_count - 16)) "$file" > "$mf_work/cut" && mv "$mf_work/cut" "$file"
damaged "cut short" "its size does not match its entry count"
printf '\377\377' | dd of="$file" bs=1 seek=64 conv=notrunc 2> /dev/null
damaged "a key overwritten" "its keys are out of order|its checksum does not match"
printf '\377\377' | dd of="$file" bs=1 seek=56 conv=notrunc 2> /dev/null
damaged "a rule overwritten" "its checksum does not match"
cp "$mf_work/whole.rules" "$file" # (the flags word: whether a run may do without libunwind)
f=$(od -An -t u1 -j 40 -N 1 "$file" | tr -d ' ')
printf "\\$(printf %o $((f ^ 1)))" | dd of="$file" bs=1 seek=40 conv=notrunc 2> /dev/null
damaged "its flags changed" "its checksum does not match"
: > "$file"
damaged "empty" "empty"
printf '\1' | dd of="$file" bs=1 seek=32 conv=notrunc 2> /dev/null
report stale MALLOC_FREQ_CACHE="$cache"
is "$(cat "$mf_work/stale.err")" "" "a cache of another profiler version or libunwind: not used, without a word"
valid "$file"; ok $? "and replaced by a whole one (${count:-no} rules)"
printf '\2' | dd of="$file" bs=1 seek=8 conv=notrunc 2> /dev/null # (version 2: keys alone)
report older MALLOC_FREQ_CACHE="$cache"
is "$(cat "$mf_work/older.err")" "" "a cache of format version 2: not used, without a word"
cmp -s "$mf_work/cold.txt" "$mf_work/older.txt" && valid "$file" &&
	[ "$(od -An -t u4 -j 8 -N 4 "$file" | tr -d ' ')" = 4 ]
ok $? "the same profile, and replaced by a whole one of version 4"
rm -f "$file" && mkfifo "$file"
damaged "a FIFO" "not a regular file"
rm -f "$file" && ln -s /etc/passwd "$file"
damaged "a symbolic link" "a symbolic link"

# The rules come from the cache: rewritten (checksum and all) so that each says "the end of the
# stack", a run by them ends every stack at its first frame, the entry point's own (whose rule
# is libmalloc_freq's, in the cache too). Rewritten so that one is no rule at all, the file is
# refused. (What the file says is the user's own word, as any of their files:
# one of another user is not used.)
# rewrite FROM TO KIND: FROM with every rule's kind set to KIND (its low 3 bits are kind + 1)
rewrite() {
	python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
src, dst, kind = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, "rb").read())
count = struct.unpack_from("<Q", b, 16)[0]
M = (1 << 64) - 1
h = 0x6a09e667f3bcc908 ^ count
flags, reserved = struct.unpack_from("<II", b, 40)
h = ((h ^ (reserved << 32 | flags)) * 0x9e3779b97f4a7c15) & M
h ^= h >> 31
for i in range(count):
    key, rule = struct.unpack_from("<QQ", b, 48 + 16 * i)
    rule = (rule & ~7) | (kind + 1)
    struct.pack_into("<Q", b, 48 + 16 * i + 8, rule)
    for w in (key, rule):
        h = ((h ^ w) * 0x9e3779b97f4a7c15) & M
        h ^= h >> 31
struct.pack_into("<Q", b, 24, h)
open(dst, "wb").write(b)
PY
}
if command -v python3 > /dev/null; then
	rewrite "$mf_work/whole.rules" "$file" 2 # MF_CFI_END
	report ends MALLOC_FREQ_CACHE="$cache"
	is "$(cat "$mf_work/ends.err")" "" "a cache whose rules all say the end: read without a word"
	n=$(wc -l < "$mf_work/ends.txt")
	is "$(grep -c '^[a-z_]* [0-9]*$' "$mf_work/ends.txt")" "$n" "and each of its $n stacks is its entry point alone: the rules are the cache's"
	rewrite "$mf_work/whole.rules" "$file" 0 # MF_CFI_UNKNOWN: not a rule a cache holds
	damaged "a rule that is none" "it holds a rule that is none"
else
	skip "python3 is not installed: the cache's rules are not rewritten"
	skip "python3 is not installed"
	skip "python3 is not installed"
	skip "python3 is not installed"
	skip "python3 is not installed"
fi
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
	rewrite "$mf_work/whole.rules" "$file" 2 2> /dev/null || cp "$mf_work/whole.rules" "$file"
	chown nobody "$file" && cp "$file" "$mf_work/foreign.rules"
	report foreign MALLOC_FREQ_CACHE="$cache"
	is "$(cat "$mf_work/foreign.err")" "" "a cache another user owns: not a word (a run under sudo meets the user's)"
	cmp -s "$mf_work/cold.txt" "$mf_work/foreign.txt"; ok $? "its rules are not used: the same profile"
	valid "$file" && [ "$(stat -c %u "$file")" = "$(id -u)" ]; ok $? "and it is replaced by a whole one of this user (${count:-no} rules)"
else
	skip "not root: no file of another user to make"
	skip "not root"
	skip "not root"
fi

mkdir -p "$mf_work/empty"
report off MALLOC_FREQ_CACHE=off HOME="$mf_work/empty"
[ -s "$mf_work/off.txt" ] && [ -z "$(ls -A "$mf_work/empty")" ]; ok $? "MALLOC_FREQ_CACHE=off: profiled, and no cache written"
report relative MALLOC_FREQ_CACHE=relative/dir HOME="$mf_work/empty"
like "$(cat "$mf_work/relative.err")" 'MALLOC_FREQ_CACHE="relative/dir" is not an absolute path.*the rule cache is off' "a relative MALLOC_FREQ_CACHE is named on stderr"
[ ! -e relative ] && [ -z "$(ls -A "$mf_work/empty")" ]; ok $? "and nothing is written"
report unwritable MALLOC_FREQ_CACHE=/dev/null/cache
is "$(cat "$mf_work/unwritable.err")" "" "a cache that cannot be written: no complaint"
cmp -s "$mf_work/cold.txt" "$mf_work/unwritable.txt"; ok $? "and the same profile"

mkdir -p "$mf_work/home"
report default -u XDG_CACHE_HOME -u MALLOC_FREQ_CACHE HOME="$mf_work/home"
valid "$mf_work/home/.cache/malloc_freq/$id.rules"; ok $? "by default the cache is ~/.cache/malloc_freq"
report xdg -u MALLOC_FREQ_CACHE HOME="$mf_work/home2" XDG_CACHE_HOME="$mf_work/xdg"
valid "$mf_work/xdg/malloc_freq/$id.rules"; ok $? "or \$XDG_CACHE_HOME/malloc_freq"

# many first runs at once: each renames a whole file into place
rm -rf "$cache"
mkdir -p "$mf_work/par"
for i in 1 2 3 4 5 6 7 8; do
	MALLOC_FREQ_CACHE="$cache" MALLOC_FREQ_DIR="$mf_work/par" LD_PRELOAD="$MF_LIB" "$prog" > /dev/null 2>&1 &
done
wait
valid "$file"; ok $? "8 first runs at once leave a whole cache (${count:-no} keys)"
report after MALLOC_FREQ_CACHE="$cache"
is "$(cat "$mf_work/after.err")" "" "which the next run reads without complaint"

# A damaged file is replaced at exit, also by a run that confirms no rule (all but one call
# sampled out): as it says.
echo "not a cache at all" > "$file"
report none MALLOC_FREQ_CACHE="$cache" MALLOC_FREQ_SAMPLE=1000000000
report after_none MALLOC_FREQ_CACHE="$cache"
is "$(head -c 6 "$file") $(cat "$mf_work/after_none.err")" "MFRULE " "a damaged file is replaced by a run that confirms no rule (read by the next without complaint)"

# A file left by a run that died (its name: the cache's, then .<pid> and more) does not stop a
# later run from saving, even one with that pid (each run in a new pid namespace is pid 1).
rm -rf "$cache" && mkdir -p "$cache" && : > "$file.1"
if unshare -pf true 2> /dev/null; then
	env MALLOC_FREQ_CACHE="$cache" MALLOC_FREQ_DIR="$mf_work/par" LD_PRELOAD="$MF_LIB" unshare -pf "$prog" > /dev/null 2>&1
	valid "$file"; ok $? "a run that is pid 1 saves beside a file $id.rules.1 left by another"
else
	skip "unshare -pf is not allowed here: no run in a new pid namespace"
fi

# The directory keeps at most 512 files: a save that finds more removes the least lately used
# down to 384, and the temporaries of saves that died an hour ago or more; other files stay.
# (600 files a minute apart, the newest first; then this run's own, the newest of all.)
rm -rf "$cache" && mkdir -p "$cache"
now=$(date +%s) i=0
while [ $i -lt 600 ]; do
	f=$(printf '%040x.rules' $((i + 1)))
	: > "$cache/$f" && touch -d "@$((now - 60 * (i + 1)))" "$cache/$f"
	i=$((i + 1))
done
: > "$cache/$id.rules.99.ab" && touch -d "@$((now - 7200))" "$cache/$id.rules.99.ab"
: > "$cache/$id.rules.98.ab" && touch -d "@$((now - 60))" "$cache/$id.rules.98.ab"
: > "$cache/notes.txt" && touch -d "@$((now - 86400 * 400))" "$cache/notes.txt"
mkdir "$mf_work/prune"
env MALLOC_FREQ_CACHE="$cache" MALLOC_FREQ_DIR="$mf_work/prune" LD_PRELOAD="$MF_LIB" "$prog" > /dev/null 2>&1
kept=$(ls "$cache" | grep -c '^[0-9a-f]*\.rules$')
old383=$(printf '%040x.rules' 383) old384=$(printf '%040x.rules' 384)
left=$([ -e "$cache/$old383" ] && echo y)$([ -e "$cache/$old384" ] && echo y)
is "$kept:$left" "384:y" "601 cache files: the newest 384 stay (this run's among them), the oldest go"
valid "$file"; ok $? "... this run's saved among them"
is "$(ls "$cache" | grep -c '\.rules\.')$([ -e "$cache/$id.rules.98.ab" ] && echo y):$(ls "$cache" | grep -c notes)" "1y:1" \
	"a dead save's temporary of two hours goes, one of a minute stays; a file not the cache's stays"
# A run that reads its file renews the file's time once a day: a file used daily stays.
touch -d "@$((now - 2 * 86400))" "$file"
mkdir "$mf_work/prune2"
env MALLOC_FREQ_CACHE="$cache" MALLOC_FREQ_DIR="$mf_work/prune2" LD_PRELOAD="$MF_LIB" "$prog" > /dev/null 2>&1
age=$(($(date +%s) - $(stat -c %Y "$file")))
[ "$age" -lt 600 ]; ok $? "a file of two days renewed by the run that reads it ($age s old now)"
touch -d "@$((now - 3600))" "$file"
mkdir "$mf_work/prune3"
env MALLOC_FREQ_CACHE="$cache" MALLOC_FREQ_DIR="$mf_work/prune3" LD_PRELOAD="$MF_LIB" "$prog" > /dev/null 2>&1
is "$(stat -c %Y "$file")" "$((now - 3600))" "one of an hour left as it is (no write at every start)"

# Run as root with a user's HOME (su, sudo -E), the default cache makes no directory of root's
# in that home (~/.cache is every program's): no cache then.
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
	mkdir -p "$mf_work/userhome" && chown nobody "$mf_work/userhome"
	report roothome -u XDG_CACHE_HOME -u MALLOC_FREQ_CACHE HOME="$mf_work/userhome"
	[ -s "$mf_work/roothome.txt" ] && [ ! -e "$mf_work/userhome/.cache" ]
	ok $? "root with another user's HOME: profiled, and no ~/.cache made there"
else
	skip "not root: no home of another user"
fi
done_testing
