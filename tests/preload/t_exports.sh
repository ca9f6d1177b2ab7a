#!/bin/sh
# libmalloc_freq.so exports the entry points it interposes (allocation; dlclose and
# dl_iterate_phdr; pthread_setcanceltype, for threads cancelled at any instruction; setuid,
# seteuid, setreuid, setresuid and chroot, for the profile's files;
# prctl and syscall, for a seccomp filter coming; unshare and setns, which may need the process
# to be one thread; pthread_create, which may meet the descriptor task at RLIMIT_NPROC;
# _exit, _Exit and the wait family, for the process record), the public API and
# malloc_freq_attached and malloc_freq_detach (called by malloc_freq --attach and --detach
# through gdb), nothing else.
. "$srcdir/tests/tap.sh"
command -v nm > /dev/null || skip_all "no nm (binutils)"
got=$(nm -D --defined-only "$MF_LIB" | awk '{ print $3 }' | sort | tr '\n' ' ')
want=$(printf '%s\n' aligned_alloc calloc dl_iterate_phdr dlclose pthread_setcanceltype free malloc \
	malloc_freq_dir malloc_freq_enable malloc_freq_disable malloc_freq_thread_enable \
	malloc_freq_thread_disable malloc_freq_stats malloc_freq_snapshot malloc_freq_reset \
	malloc_freq_tag_push malloc_freq_tag_pop malloc_freq_attached malloc_freq_detach memalign \
	posix_memalign pvalloc realloc reallocarray valloc setuid seteuid setreuid setresuid chroot prctl syscall unshare setns pthread_create \
	_exit _Exit wait waitpid wait3 wait4 waitid |
	sort | tr '\n' ' ')
is "$got" "$want" "exported symbols are exactly the entry points and the public API"
done_testing
