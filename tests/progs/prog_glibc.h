/* What the test programs use of glibc after 2.28, for the oldest glibc supported: each
 * stand-in only where glibc lacks it. */
#ifndef MF_TEST_PROG_GLIBC_H
#define MF_TEST_PROG_GLIBC_H

#include <errno.h>
#include <sys/syscall.h>

#if defined(__GLIBC__) && __GLIBC__ == 2 && __GLIBC_MINOR__ < 32
/* glibc 2.32's: an errno's name, for the errnos the tests meet */
static inline const char *strerrorname_np(int e)
{
	switch (e) {
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case EBADF:
		return "EBADF";
	case ENOMEM:
		return "ENOMEM";
	case EACCES:
		return "EACCES";
	case EFAULT:
		return "EFAULT";
	case EINVAL:
		return "EINVAL";
	case ENOSYS:
		return "ENOSYS";
	default:
		return "E?";
	}
}
#endif
#ifndef SYS_close_range /* Linux 5.9's, one number on every architecture */
#define SYS_close_range 436
#endif

#endif
