/* The calls that change who the process is, what its root is, or which namespaces it is in:
 * set*uid, chroot, unshare and setns. Each makes the profile's files ready for the change
 * (their owner, the directory kept open, the descriptor task gone), then makes the call.
 * Return value and errno are the call's; no malloc, no stdio. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mf_internal.h"

/* Who the process is and what its root is decide where the profile can be written: its files
 * go to the user it becomes, before it becomes that user (who could not create or grow them in
 * a directory of root's), and the directory is kept open before a chroot hides its path.
 * Before mf_real_init, the system calls (the process has one thread then). */
MF_EXPORT int setuid(uid_t uid)
{
	if (!mf_interpose_aside())
		mf_prof_give_to(uid);
	return mf_real.setuid ? mf_real.setuid(uid) : (int)syscall(SYS_setuid, uid);
}

MF_EXPORT int seteuid(uid_t euid)
{
	if (!mf_interpose_aside())
		mf_prof_give_to(euid);
	return mf_real.seteuid ? mf_real.seteuid(euid)
			       : (int)syscall(SYS_setresuid, (uid_t)-1, euid, (uid_t)-1);
}

MF_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
	if (!mf_interpose_aside())
		mf_prof_give_to(euid);
	return mf_real.setreuid ? mf_real.setreuid(ruid, euid)
				: (int)syscall(SYS_setreuid, ruid, euid);
}

MF_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	if (!mf_interpose_aside())
		mf_prof_give_to(euid);
	return mf_real.setresuid ? mf_real.setresuid(ruid, euid, suid)
				 : (int)syscall(SYS_setresuid, ruid, euid, suid);
}

MF_EXPORT int chroot(const char *path)
{
	int saved = errno;
	if (!mf_interpose_aside())
		mf_prof_dir_keep();
	errno = saved;
	return mf_real.chroot ? mf_real.chroot(path) : (int)syscall(SYS_chroot, path);
}

/* A task of the descriptor table's own (fds_apart.c) must have left first: they may need the
 * process to be one thread. */
MF_EXPORT int unshare(int flags)
{
	return (int)syscall(SYS_unshare, flags); /* (our syscall() settles) */
}

MF_EXPORT int setns(int fd, int nstype)
{
	return (int)syscall(SYS_setns, fd, nstype);
}
