/* A child made without fork(), so no atfork handler runs in it: the parent calls site_parent
 * 300 times, makes the child, calls site_parent 300 times more and waits for it; the child
 * calls site_child 200 times and leaves with exit(0) (its exit handlers run, the profiler's
 * too). Prints "child PID"; with "kill", the parent then dies by SIGKILL (its profile was never
 * finalized).
 *   sysfork   syscall(SYS_fork)
 *   clone     syscall(SYS_clone, SIGCHLD, 0, ...): a fork by another name
 * Usage: prog_rawfork sysfork|clone [kill] */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prog.h"

SITE(site_parent, 16)
SITE(site_child, 32)

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	for (int i = 0; i < 300; i++)
		site_parent();
	fflush(stdout);
	pid_t pid;
	if (!strcmp(mode, "sysfork"))
#ifdef SYS_fork
		pid = (pid_t)syscall(SYS_fork);
#else /* (AArch64 has no fork system call: its fork is clone with SIGCHLD alone) */
		pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
#endif
	else if (!strcmp(mode, "clone"))
		pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
	else
		return 2;
	if (pid < 0)
		return 3;
	if (pid == 0) {
		for (int i = 0; i < 200; i++)
			site_child();
		exit(0);
	}
	for (int i = 0; i < 300; i++)
		site_parent();
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 4;
	printf("child %d\n", (int)pid);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "kill"))
		raise(SIGKILL);
	return 0;
}
