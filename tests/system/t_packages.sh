#!/bin/sh
# make check-packages: the Debian packages (debian/) built with dpkg-buildpackage from a copy of
# the distributed tree, lintian finding no error in them, their files as listed below, then
# installed with apt-get and used from /usr with nothing set: the launcher and mf_print on
# demos/threads_demo (counts known by construction), the library preloaded by its bare name, a
# program built with the installed pkg-config file. Then a `make install` under a prefix the
# loader does not search: a program linked with the stub runs with the rpath or LD_LIBRARY_PATH
# README gives. Installs and removes packages: root only, and only where none of them is
# installed yet. Environment as for make check, and MF_BUILD (the build tree, for make
# distdir). Ends with "N passed, N failed".
. "$srcdir/tests/tap.sh"
pkgs="malloc-freq libmalloc-freq libmalloc-freq-api0 libmalloc-freq-dev"
[ "$(id -u)" = 0 ] || bail "installs packages: run as root, on a machine you may change (CI does)"
for p in $pkgs; do
	! dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2> /dev/null | grep -q '^.i' ||
		bail "$p is installed already: this test installs and removes it (apt-get purge it first)"
done
[ -n "$MF_BUILD" ] || bail "MF_BUILD is not set (run through make check-packages)"
installed=no
remove() { [ $installed = no ] || apt-get purge -y -qq $pkgs > /dev/null 2>&1; }
trap 'remove; rm -rf "$mf_work"' EXIT
trap 'exit 1' INT TERM
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH) || bail "dpkg-architecture failed (apt-get install dpkg-dev)"
version=$(dpkg-parsechangelog -l "$srcdir/debian/changelog" -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
# copy DIR: the distributed files of the tree, as in its release tarball, in $mf_work/DIR
copy() { mkdir -p "$mf_work/${1%/*}" && make -s -C "$MF_BUILD" distdir distdir="$mf_work/$1" > "$mf_work/$1.log" 2>&1; }

# ---- build and check the packages
copy pkg/src || bail "make distdir failed: $(tail -5 "$mf_work/pkg/src.log")"
(cd "$mf_work/pkg/src" && dpkg-checkbuilddeps) > "$mf_work/deps" 2>&1 ||
	bail "build dependencies missing: $(cat "$mf_work/deps") (apt-get install debhelper dpkg-dev lintian and those)"
(cd "$mf_work/pkg/src" && within 3600 dpkg-buildpackage -us -uc -b) > "$mf_work/build.log" 2>&1
rc=$?
ok $rc "dpkg-buildpackage -us -uc -b builds from the distributed tree"
[ $rc = 0 ] || { tail -40 "$mf_work/build.log" | sed 's/^/# /'; bail "no packages"; }
sed -n 's/^\(# [A-Z]*: \)/#   make check in the build: \1/p' "$mf_work/build.log"
changes="$mf_work/pkg/malloc-freq_${version}_$arch.changes"
lintian --fail-on error "$changes" > "$mf_work/lintian" 2>&1
ok $? "lintian reports no error"
grep -v '^running with root' "$mf_work/lintian" | sed 's/^/#   /'
deb() { echo "$mf_work/pkg/$1_${version}_$arch.deb"; }
# files PACKAGE: what it holds, directories left out, one a line, sorted
files() { dpkg-deb -c "$(deb "$1")" | awk '$1 !~ /^d/ { print $6 }' | sort; }
doc() { printf './usr/share/doc/%s/changelog.Debian.gz\n./usr/share/doc/%s/copyright\n' "$1" "$1"; }
lib="./usr/lib/$triplet"
# (the documents as dh_compress leaves them: gzipped from 4 KiB on, which their length decides)
is "$(files malloc-freq | sed 's,^\(./usr/share/doc/malloc-freq/.*\.md\)\.gz$,\1,' | sort)" \
	"$( (printf '%s\n' ./usr/bin/malloc_freq ./usr/bin/mf_print \
	./usr/share/doc/malloc-freq/README.md ./usr/share/man/man1/malloc_freq.1.gz \
	./usr/share/man/man1/mf_print.1.gz ./usr/share/doc/malloc-freq/outputs.md \
	./usr/share/doc/malloc-freq/json.md; doc malloc-freq) | sort)" \
	"malloc-freq: the launcher, mf_print, their man pages and the guides to the outputs"
is "$(files libmalloc-freq)" "$( (printf '%s\n' "$lib/libmalloc_freq.so" \
	./usr/share/lintian/overrides/libmalloc-freq ./usr/share/man/man7/malloc_freq.7.gz; doc libmalloc-freq) | sort)" \
	"libmalloc-freq: the preloaded library, in the library directory the launcher was built with, and its settings' man page"
is "$(files libmalloc-freq-api0)" "$( (printf '%s\n' "$lib/libmalloc_freq_api.so.0" \
	"$lib/libmalloc_freq_api.so.0.0.0"; doc libmalloc-freq-api0) | sort)" "libmalloc-freq-api0: the stub's shared library"
is "$(files libmalloc-freq-dev)" "$( (printf '%s\n' ./usr/include/malloc_freq.h \
	./usr/include/malloc_freq_format.h "$lib/libmalloc_freq_api.a" "$lib/libmalloc_freq_api.so" \
	"$lib/pkgconfig/malloc_freq_api.pc" ./usr/share/man/man3/malloc_freq.3.gz; doc libmalloc-freq-dev) | sort)" \
	"libmalloc-freq-dev: the headers, the stub (static and the link), the pkg-config file and the API's man page"
dpkg-deb -f "$(deb libmalloc-freq)" Depends | grep -q 'libunwind'
ok $? "libmalloc-freq depends on libunwind, which it loads with dlopen ($(dpkg-deb -f "$(deb libmalloc-freq)" Depends))"

# ---- installed: the quick start from /usr with nothing set
apt-get install -y -qq "$(deb malloc-freq)" "$(deb libmalloc-freq)" "$(deb libmalloc-freq-api0)" \
	"$(deb libmalloc-freq-dev)" > "$mf_work/install.log" 2>&1
rc=$?
installed=yes
ok $rc "apt-get install the four packages"
[ $rc = 0 ] || { tail -20 "$mf_work/install.log" | sed 's/^/# /'; bail "not installed"; }
cd "$mf_work" || bail "cd $mf_work"
# (the built demo, not the build tree's: -O2 -g as make demo builds it)
cc -O2 -g -pthread -o threads_demo "$srcdir/demos/threads_demo.c" || bail "cc threads_demo failed"
clean() { env -i PATH=/usr/bin:/bin HOME="$mf_work" "$@"; }
clean malloc_freq -o prof ./threads_demo > out 2> err
ok $? "malloc_freq ./threads_demo runs from /usr/bin with nothing set"
like "$(cat err)" '^malloc_freq: [0-9]+ calls, .* 1 process, 5 threads$' "... and says what it recorded ($(head -1 err))"
like "$(cat err)" "^malloc_freq: report: /usr/bin/mf_print $mf_work/prof$" "... and names the installed mf_print"
clean mf_print --collapsed prof > c.txt 2> err
ok $? "mf_print reads the profile"
sed 's/^/#   /' err
# Per record: one 128-byte buffer (format_record), the line and its 6 words strdup'ed
# (split_words), one realloc per character of "worker W record I status ok" (append_char):
# 26 characters and the digits of I; per worker, I from 0 to 19999 has 88890 digits.
is "$(calls c.txt ';format_record;malloc$')" 80000 "format_record's buffers: 4 workers x 20000 records"
is "$(calls c.txt ';split_words;[^;]*strdup;malloc$')" 560000 "split_words' strdups: 80000 records x (1 + 6)"
is "$(calls c.txt ';append_char;realloc$')" $((4 * (20000 * 26 + 88890))) "append_char's reallocs: one per character"
clean mf_print --threshold 2 prof > report 2> err
like "$(cat report)" '`- worker threads_demo.c:68$' "the report names the demo's lines (symbolized from /usr/bin/mf_print)"
mkdir bare && clean MALLOC_FREQ_DIR="$mf_work/bare" LD_PRELOAD=libmalloc_freq.so ./threads_demo \
	> /dev/null 2> err && clean mf_print --collapsed bare/malloc_freq.* > bare.txt 2>> err
sed 's/^/#   /' err
is "$(calls bare.txt ';append_char;realloc$')" $((4 * (20000 * 26 + 88890))) \
	"LD_PRELOAD=libmalloc_freq.so, by its bare name, finds the installed library"
cc -O2 -o api_demo "$srcdir/demos/api_demo.c" $(pkg-config --cflags --libs malloc_freq_api) 2> err
ok $? "a program builds with pkg-config --cflags --libs malloc_freq_api"
sed 's/^/#   /' err
like "$(clean ./api_demo)" 'not profiled' "... runs with the installed stub alone"
like "$(clean malloc_freq -q -o api ./api_demo)" "snapshots 1 and 2 in $mf_work/api/" "... and under the launcher, the profiler's functions take over"
remove
installed=no
[ ! -e /usr/bin/malloc_freq ] && [ ! -e "/usr/lib/$triplet/libmalloc_freq.so" ]
ok $? "apt-get purge leaves neither the launcher nor the library"

# ---- make install under a prefix of its own: the stub found at run time as README says
copy prefix/src || bail "make distdir failed"
(cd prefix/src && ./configure -q --prefix="$mf_work/prefix/usr" && make -j"$(nproc)" && make install) \
	> prefix.log 2>&1
rc=$?
ok $rc "./configure --prefix=$mf_work/prefix/usr && make install"
[ $rc = 0 ] || tail -20 prefix.log | sed 's/^/# /'
export PKG_CONFIG_PATH="$mf_work/prefix/usr/lib/pkgconfig"
cc -O2 -o api_plain "$srcdir/demos/api_demo.c" $(pkg-config --cflags --libs malloc_freq_api) &&
	cc -O2 -o api_rpath "$srcdir/demos/api_demo.c" $(pkg-config --cflags --libs malloc_freq_api) \
		-Wl,-rpath,"$(pkg-config --variable=libdir malloc_freq_api)"
ok $? "a program builds with that prefix's pkg-config file"
clean ./api_plain > /dev/null 2> err
rc=$?
is "$rc:$(grep -o 'libmalloc_freq_api.so.0: cannot open' err)" "127:libmalloc_freq_api.so.0: cannot open" \
	"without an rpath or LD_LIBRARY_PATH the loader does not find the stub there"
like "$(clean ./api_rpath)" 'not profiled' "linked with -Wl,-rpath,\$(pkg-config --variable=libdir ...), it runs"
like "$(clean LD_LIBRARY_PATH="$mf_work/prefix/usr/lib" ./api_plain)" 'not profiled' "with LD_LIBRARY_PATH, it runs"
like "$(clean "$mf_work/prefix/usr/bin/malloc_freq" -q -o papi ./api_rpath)" "snapshots 1 and 2 in $mf_work/papi/" \
	"under that prefix's launcher, which finds its own library, the profiler's functions take over"

echo "$((mf_n - mf_failed)) passed, $mf_failed failed"
[ "$mf_failed" = 0 ]
