#!/bin/sh
# The documents say what the code does, each fact in one place: every option that --help lists
# (launcher and mf_print, long and short forms) is in its man page and every option the man page
# documents is in --help; every MALLOC_FREQ_* variable the library reads is in malloc_freq(7)
# and every one documented there is read; every man page renders without a warning; every
# link between the Markdown documents leads to a file and a heading that exist; and
# tests/README.md indexes every test and names the tests of every source file.
. "$srcdir/tests/tap.sh"
launcher=$(dirname "$MF_PRINT")/../launcher/malloc_freq
[ -x "$launcher" ] || bail "no launcher at $launcher"
LC_ALL=C
export LC_ALL

# help_options PROGRAM: the options its --help lists, one a line: the lines that start with an
# option ("  -o, --output DIR", "      --seed N"), not their continuations (indented further)
help_options() {
	"$1" --help | grep -E '^(  -[A-Za-z]|      --[a-z])' |
		sed 's/^ *\(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\1\2/; s/^ *\(-[A-Za-z]\) .*/\1/' |
		tr -s ', ' '\n\n' | grep . | sort -u
}
# man_options PAGE: the options its .TP tags name (".BR \-o ", " \-\-output " " \fIDIR\fR")
man_options() {
	awk 'tag { tag = 0; if ($0 ~ /^\.[BIR]*[ \t]*\\-/) print } $0 == ".TP" { tag = 1 }' "$1" |
		sed 's/\\-/-/g; s/\\f[BIRP]//g; s/^\.[BIR]* *//' |
		grep -oE '(^|[ "])--?[A-Za-z][A-Za-z-]*' | tr -d ' "' | sort -u
}
# differ A B WHAT: a check that the option lists A and B are equal, naming what is in one only
differ() {
	printf '%s\n' "$1" > "$mf_work/a"
	printf '%s\n' "$2" > "$mf_work/b"
	is "$(grep -vxF -f "$mf_work/b" "$mf_work/a")" "" "$3: every one of --help's is in the man page"
	is "$(grep -vxF -f "$mf_work/a" "$mf_work/b")" "" "$3: every one of the man page's is in --help"
}

for pair in "$launcher:$srcdir/launcher/malloc_freq.1" "$MF_PRINT:$srcdir/mf_print/mf_print.1"; do
	prog=${pair%%:*} page=${pair#*:}
	h=$(help_options "$prog")
	m=$(man_options "$page")
	name=$(basename "$page")
	# (the parsers themselves: they must find the options every program has)
	printf '%s\n' "$h" | grep -qx -- --help && printf '%s\n' "$h" | grep -qx -- -h
	ok $? "$name: --help's options are found (--help, -h among them)"
	printf '%s\n' "$m" | grep -qx -- --version && printf '%s\n' "$m" | grep -qx -- -V
	ok $? "$name: the man page's options are found (--version, -V among them)"
	differ "$h" "$m" "$name"
done

# The variables: every "MALLOC_FREQ_..." string literal in lib/ (secure_getenv calls, the
# config table, and the messages that name a variable) against the .TP entries of
# malloc_freq(7)'s ENVIRONMENT section.
read_vars=$(grep -rhoE '"MALLOC_FREQ_[A-Z][A-Z0-9_]*' "$srcdir/lib" --include='*.c' \
	--include='*.h' | tr -d '"' | sort -u)
man7=$srcdir/lib/malloc_freq.7
doc_vars=$(awk '/^\.SH / { env = ($2 == "ENVIRONMENT") } env && tag && /^\.B MALLOC_FREQ_/ { print $2 }
	{ tag = ($0 == ".TP") }' "$man7" | sort -u)
[ "$(printf '%s\n' "$read_vars" | grep -c .)" -ge 10 ]
ok $? "the library's MALLOC_FREQ_* variables are found ($(printf '%s\n' "$read_vars" | grep -c .))"
printf '%s\n' "$doc_vars" > "$mf_work/b"
is "$(printf '%s\n' "$read_vars" | grep -vxF -f "$mf_work/b")" "" \
	"every MALLOC_FREQ_* variable lib/ reads is in malloc_freq(7)"
printf '%s\n' "$read_vars" > "$mf_work/a"
is "$(printf '%s\n' "$doc_vars" | grep -vxF -f "$mf_work/a")" "" \
	"every MALLOC_FREQ_* variable malloc_freq(7) documents is read by lib/"

# Every man page renders without a warning, by groff (all warnings) and by man.
pages="$srcdir/launcher/malloc_freq.1 $srcdir/mf_print/mf_print.1 $srcdir/lib/malloc_freq.3 $man7"
for page in $pages; do
	name=$(basename "$page")
	if command -v groff > /dev/null; then
		is "$(groff -ww -man -z "$page" 2>&1)" "" "$name: groff -ww -man renders it without a warning"
	else
		skip "$name: no groff (apt-get install groff-base)"
	fi
	if command -v man > /dev/null; then
		is "$(MANWIDTH=80 man --warnings -l "$page" 2>&1 > /dev/null)" "" \
			"$name: man --warnings -l renders it without a warning"
	else
		skip "$name: no man (apt-get install man-db)"
	fi
done

# The Markdown documents' links: a relative link names a file of the source tree, and its
# #anchor a heading of that file (GitHub's slug: lower case, punctuation dropped, spaces to -).
# slugs FILE: the anchors of FILE's headings
slugs() {
	awk '/^```/ { code = !code } !code && /^#+ / { sub(/^#+ +/, ""); print }' "$1" |
		tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}
bad=
for doc in README.md HACKING.md docs/*.md tests/README.md; do
	[ -f "$srcdir/$doc" ] || continue
	dir=$(dirname "$doc")
	for link in $(grep -oE '\]\([^) ]+\)' "$srcdir/$doc" | sed 's/^](//; s/)$//'); do
		case $link in http://* | https://* | mailto:*) continue ;; esac
		file=${link%%#*} anchor=
		case $link in *'#'*) anchor=${link#*#} ;; esac
		if [ -z "$file" ]; then target=$doc; else target=$dir/$file; fi
		if [ ! -e "$srcdir/$target" ]; then
			bad="$bad $doc:$link(no file)"
		elif [ -n "$anchor" ] && ! slugs "$srcdir/$target" | grep -qxF -- "$anchor"; then
			bad="$bad $doc:$link(no heading)"
		fi
	done
done
is "$bad" "" "every link of README.md, HACKING.md, docs/*.md and tests/README.md leads to a file and heading"

# tests/README.md: every test has its line in the index, every test and source file the file
# names exists, every .c file of lib/, mf_print/ and launcher/ has its line in the table of
# source files, and the section of hostile hosts holds tests/local.mk's HOSTILE_TESTS.
idx=$srcdir/tests/README.md
# rows HEADING: the first cells ("| `name` |") of the tables under HEADING, up to the next
# heading of its level or above
rows() {
	awk -v want="$1" 'BEGIN { lv = index(want, " ") }
		/^#+ / { l = index($0, " "); if ($0 == want) on = 1; else if (l <= lv) on = 0 }
		on && /^\| `/ { split($0, c, "`"); print c[2] }' "$idx"
}
# only A B: the lines of A that are not in B
only() {
	printf '%s\n' "$2" > "$mf_work/b"
	printf '%s\n' "$1" | grep . | grep -vxF -f "$mf_work/b"
}
tests=$(cd "$srcdir/tests" && ls */t_*.sh */test_*.c | sort)
indexed=$(rows '## The index' | sort)
is "$(only "$tests" "$indexed" | tr '\n' ' ')" "" \
	"every tests/*/t_*.sh and tests/*/test_*.c has its line in tests/README.md's index"
is "$(printf '%s\n' "$indexed" | uniq -d | tr '\n' ' ')" "" \
	"tests/README.md's index names each test once"
named=$(grep -oE '\<([a-z]+/)*(t|test)_[a-z0-9_]+\.(sh|c)\>' "$idx" | sed 's|^tests/||' | sort -u)
is "$(only "$named" "$tests" | tr '\n' ' ')" "" "every test tests/README.md names is in tests/"
sources=$(cd "$srcdir" && find lib mf_print launcher -name '*.c' | sort)
mapped=$(rows '## Source files and their tests' | sort)
is "$(only "$sources" "$mapped" | tr '\n' ' ')" "" \
	"every .c file of lib/, mf_print/ and launcher/ has its line in tests/README.md's table"
gone=
for f in $mapped; do [ -e "$srcdir/$f" ] || gone="$gone $f"; done
is "$gone" "" "every source file tests/README.md's table names exists"
is "$(awk '/^## / { on = /^## Source files/ } on && /^\| `/ && !/`([a-z]+\/)?(t|test)_|no test/' "$idx")" "" \
	"every source file in tests/README.md's table names its tests, or says it has none"
# A section named for a list of tests/local.mk ("### Hostile hosts (`HOSTILE_TESTS`)") holds
# that list's tests; list VAR: the tests of VAR's assignments (=, +=, with continued lines)
list() {
	awk -v v="$1" '$1 == v && ($2 == "=" || $2 == "+=") { on = 1 } on { print; on = /\\$/ }' \
		"$srcdir/tests/local.mk" | grep -oE 'tests/[a-z]+/t_[a-z0-9_]+\.sh' | sed 's|^tests/||' | sort
}
lists=$(sed -n 's/^### .*(`\([A-Z_]*\)`)$/\1/p' "$idx")
[ "$(printf '%s\n' "$lists" | grep -c .)" -ge 2 ]
ok $? "tests/README.md's sections of tests/local.mk's lists are found ($(echo $lists))"
for v in $lists; do
	heading=$(grep -m1 "^### .*(\`$v\`)\$" "$idx")
	is "$(rows "$heading" | sort)" "$(list "$v")" "tests/README.md's section $v is tests/local.mk's $v"
done
done_testing
