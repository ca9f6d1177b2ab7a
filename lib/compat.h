/* What glibc 2.28 to 2.34 (and the compilers of their distributions) lack of the later
 * interfaces the code uses, made from older ones (configure says which are missing; include
 * after config.h). The only file that knows which glibc brought what. Each stands in for the
 * real one inside malloc: no malloc, no stdio. */
#ifndef MF_COMPAT_H
#define MF_COMPAT_H

#include <errno.h>
#include <locale.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef HAVE_GETTID /* glibc 2.30 */
static inline pid_t mf_compat_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}
#define gettid mf_compat_gettid
#endif

#ifndef HAVE_GETDENTS64 /* glibc 2.30 */
#define getdents64(fd, buf, n) ((ssize_t)syscall(SYS_getdents64, (fd), (buf), (n)))
#endif

#ifndef HAVE_STRERRORDESC_NP /* glibc 2.32 */
/* The message of a known errno untranslated: strerror_l in the C locale (a static object,
 * no allocation, no catalog read); an unknown one would be formatted into a block
 * malloc'ed, so it is not asked. */
static inline const char *mf_compat_strerrordesc_np(int err)
{
	if (err < 1 || err > EHWPOISON || err == 41 || err == 58) /* (41, 58: none on Linux) */
		return "Unknown error";
	return strerror_l(err, newlocale(LC_ALL_MASK, "C", (locale_t)0));
}
#define strerrordesc_np mf_compat_strerrordesc_np
#endif

#ifndef HAVE_SIGABBREV_NP /* glibc 2.32 */
/* The signal's name without "SIG" (the numbers Linux gives x86-64 and AArch64 alike); NULL
 * for a real-time signal or none, as glibc's. */
static inline const char *mf_compat_sigabbrev_np(int sig)
{
	static const char *const names[] = {
	    NULL,     "HUP",  "INT",	"QUIT", "ILL",	 "TRAP", "ABRT", "BUS",
	    "FPE",    "KILL", "USR1",	"SEGV", "USR2",	 "PIPE", "ALRM", "TERM",
	    "STKFLT", "CHLD", "CONT",	"STOP", "TSTP",	 "TTIN", "TTOU", "URG",
	    "XCPU",   "XFSZ", "VTALRM", "PROF", "WINCH", "POLL", "PWR",	 "SYS"};
	return sig > 0 && sig < (int)(sizeof(names) / sizeof(names[0])) ? names[sig] : NULL;
}
#define sigabbrev_np mf_compat_sigabbrev_np
#endif

#ifdef HAVE___LIBC_SINGLE_THREADED
#include <sys/single_threaded.h>
#else /* glibc 2.32 */
/* glibc's own flag that a thread was ever created (set for good by pthread_create): in the
 * thread control block's header, after tcb, dtv and self, on x86-64. Elsewhere: as if there
 * were threads (every path is right for several threads, only slower). */
static inline int mf_compat_single_threaded(void)
{
#if defined(__x86_64__)
	int multiple;
	__asm__ volatile("movl %%fs:0x18, %0" : "=r"(multiple));
	return !multiple;
#else
	return 0;
#endif
}
#define __libc_single_threaded (mf_compat_single_threaded())
#endif

#if defined(__x86_64__) && !defined(__clang__) && __GNUC__ < 11
/* GCC 11's __builtin_thread_pointer: on x86-64 the thread control block's first word holds
 * its own address, the thread pointer. */
static inline void *mf_compat_thread_pointer(void)
{
	void *tp;
	__asm__("movq %%fs:0, %0" : "=r"(tp));
	return tp;
}
#define __builtin_thread_pointer mf_compat_thread_pointer
#endif

#endif
