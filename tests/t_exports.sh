#!/bin/sh
# libmalloc_freq.so exports the entry points it interposes (the allocator's, and those the
# profile's files depend on) and the public API, nothing else.
. "$srcdir/tests/tap.sh"
command -v nm > /dev/null || skip_all "no nm (binutils)"
got=$(nm -D --defined-only "$MF_LIB" | awk '{ print $3 }' | sort | tr '\n' ' ')
want=$(printf '%s\n' aligned_alloc calloc dl_iterate_phdr dlclose free malloc malloc_freq_dir memalign \
	posix_memalign pvalloc realloc reallocarray valloc setuid seteuid setreuid setresuid chroot |
	sort | tr '\n' ' ')
is "$got" "$want" "exported symbols are exactly the entry points and the public API"
done_testing
