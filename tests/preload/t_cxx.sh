#!/bin/sh
# A C++ program: operator new attributed to its site with exact counts, exceptions thrown
# while allocating still caught, output unchanged; names demangled and simplified. Functions
# GCC's debug info names bare (internal linkage) keep their namespace and class, with -g and
# without, and GCC's clones are named as the function they copy.
. "$srcdir/tests/tap.sh"
plain=$("$MF_TESTS/prog_cxx" 2> "$mf_work/plain.err"); prc=$?
# (a C++ program for another processor needs that processor's libstdc++: libstdc++6:arm64)
[ $prc = 127 ] && grep -q 'error while loading shared libraries' "$mf_work/plain.err" &&
	skip_all "prog_cxx does not start here: $(head -1 "$mf_work/plain.err")"
got=$(profile "$MF_TESTS/prog_cxx"); rc=$?
is "$rc:$got" "$prc:$plain" "same output and status under the profiler"
like "$got" "caught 300 runtime_error, bad_alloc 1" "exceptions thrown while allocating are caught"
"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt"; ok $? "mf_print reads it"
is "$(calls "$mf_work/c.txt" ';site_new;operator new;malloc$')" 1234 "new Node: 1234 calls under operator new"
n=$(calls "$mf_work/c.txt" ';site_throw;__cxa_allocate_exception;malloc$')
is "$n" 300 "each throw allocates its exception object: 300"
is "$(calls "$mf_work/c.txt" ';site_bad_alloc;operator new;malloc$')" 1 "the failing new[] is counted once (operator new[] tail-calls operator new)"

cxx=${CXX:-g++} # (the C++ compiler of the build: a cross compiler for another processor)
if command -v "${cxx%% *}" > /dev/null; then
	for flags in "-O2 -g" "-O2"; do
		bin=$mf_work/prog_cxx_scopes
		$cxx $flags -o "$bin" "$srcdir/tests/progs/prog_cxx_scopes.cpp" || { fail "$cxx $flags builds prog_cxx_scopes"; continue; }
		rm -rf "$mf_work"/malloc_freq.*
		is "$(profile "$bin")" ok "g++ $flags: prog_cxx_scopes runs under the profiler"
		"$MF_PRINT" --collapsed "$mf_work"/malloc_freq.* > "$mf_work/c.txt" 2> /dev/null
		got=$(for site in '\(anonymous namespace\)::Parser::parse;operator new' '\(anonymous namespace\)::Parser::reset' \
			'ns::Lexer::parse' 'ns::reset' 'lambda_site;lambda_site::[{]lambda[^;]*[}]::operator[(][)]'; do
			printf '%s ' "$(calls "$mf_work/c.txt" ";main;$site;malloc\$")"
		done)
		is "$got" "201 202 203 204 205 " "g++ $flags: each function by its scopes' name, with its own count"
		is "$(grep -c 'clone' "$mf_work/c.txt")" 0 "g++ $flags: no clone's suffix in a name"
	done
else
	skip "no $cxx to build prog_cxx_scopes"
fi
done_testing
