/* The process's end as the program makes it outside exit(): _exit and _Exit, and a child's
 * end as its parent learns it from the wait family. The process record (process.c) is written
 * first, then the call is made. Return values, status and errno are the call's; no malloc, no
 * stdio. */
#include "config.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mf_internal.h"

/* _exit and _Exit end the process without exit()'s handlers: the process record says so
 * first. (A vfork child's call writes nothing: the record is its parent's.) */
static __attribute__((noreturn)) void mf_quick_exit(int status)
{
	mf_process_quick_exit(status);
	if (mf_process_real.exit)
		mf_process_real.exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

MF_EXPORT void _exit(int status)
{
	mf_quick_exit(status);
}

MF_EXPORT void _Exit(int status)
{
	mf_quick_exit(status);
}

/* The wait family: a child's end, as returned, goes into the child's process record (a child
 * killed by a signal cannot say so itself). The status is asked for even when the caller does
 * not want it. Before mf_process_init, the system call. */
static pid_t mf_waited(pid_t r, const int *status)
{
	if (r > 0)
		mf_process_reaped(r, *status);
	return r;
}

MF_EXPORT pid_t wait(int *status)
{
	int st, *s = status ? status : &st;
	return mf_waited(mf_process_real.wait ? mf_process_real.wait(s)
					      : (pid_t)syscall(SYS_wait4, -1, s, 0, NULL),
			 s);
}

MF_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	int st, *s = status ? status : &st;
	return mf_waited(mf_process_real.waitpid ? mf_process_real.waitpid(pid, s, options)
						 : (pid_t)syscall(SYS_wait4, pid, s, options, NULL),
			 s);
}

MF_EXPORT pid_t wait3(int *status, int options, struct rusage *usage)
{
	int st, *s = status ? status : &st;
	return mf_waited(mf_process_real.wait3 ? mf_process_real.wait3(s, options, usage)
					       : (pid_t)syscall(SYS_wait4, -1, s, options, usage),
			 s);
}

MF_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
	int st, *s = status ? status : &st;
	return mf_waited(mf_process_real.wait4 ? mf_process_real.wait4(pid, s, options, usage)
					       : (pid_t)syscall(SYS_wait4, pid, s, options, usage),
			 s);
}

MF_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	int r = mf_process_real.waitid ? mf_process_real.waitid(idtype, id, info, options)
				       : (int)syscall(SYS_waitid, idtype, id, info, options, NULL);
	if (r == 0 && !(options & WNOWAIT))
		mf_process_reaped_info(info);
	return r;
}
