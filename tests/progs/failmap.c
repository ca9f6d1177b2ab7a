/* Preloaded before the profiler by t_dlopen: once the program sets mf_test_fail_page, the next
 * one-page anonymous mmap that libmalloc_freq makes fails with ENOMEM (an allocation the
 * profiler needs while it looks at the loaded objects). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int mf_test_fail_page;	  /* set by the program */
int mf_test_failed_pages; /* how many were failed */

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	Dl_info info;
	if (mf_test_fail_page && len == 4096 && (flags & MAP_ANONYMOUS) &&
	    dladdr(__builtin_return_address(0), &info) && info.dli_fname &&
	    strstr(info.dli_fname, "libmalloc_freq")) {
		mf_test_fail_page = 0;
		mf_test_failed_pages++;
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
