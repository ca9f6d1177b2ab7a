/* A program of known counts for process-tree tests; each mode allocates from site_tree:
 *   alloc N STATUS       N calls, then returns STATUS from main
 *   forkexit N M         N calls; a child makes M calls and calls _exit(7); waits for it
 *   forkfirst N M        forks before its first call; the child makes M calls (its record is
 *                        made before its parent's) and exits 0; then N calls; waits for it
 *   exec N M             N calls, then execs itself as "alloc M 0"
 *   execfork N M K       N calls, then execs itself as "forkfirst M K"
 *   execstatus N S       N calls, then execs itself as "alloc 0 S" (which allocates nothing:
 *                        no record of its own, as a static program)
 *   orphan N M           N calls; a child makes M calls, forks a grandchild and calls _exit(0);
 *                        the grandchild waits until it is orphaned, then makes M calls (its
 *                        first: the parent it names is gone); waits for both to end
 *   kill N               N calls, then kills itself with SIGKILL
 *   wait N               N calls, says "ready", then waits to be killed
 *   huge N               N calls of malloc(2^63) (each fails), then N calls as usual
 *   name N               names its thread "ESC[31m", newline, "x", then N calls */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void site_tree(void)
{
	sink = malloc(48);
	free(sink);
}

static void calls(long n)
{
	for (long i = 0; i < n; i++)
		site_tree();
}

/* forkfirst: the parent allocates only once its child has (no stdio before: it allocates). */
static int fork_first(long n, long m)
{
	int fds[2];
	char c;
	if (pipe(fds))
		return 3;
	pid_t child = fork();
	if (child == 0) {
		calls(m);
		exit(write(fds[1], "x", 1) == 1 ? 0 : 3);
	}
	close(fds[1]);
	int st;
	if (child < 0 || read(fds[0], &c, 1) != 1)
		return 3;
	calls(n);
	return waitpid(child, &st, 0) == child && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 3;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *mode = argv[1];
	long n = atol(argv[2]), m = argc > 3 ? atol(argv[3]) : 0;
	volatile size_t huge = (size_t)1 << 63;
	if (!strcmp(mode, "forkfirst"))
		return fork_first(n, m);
	if (!strcmp(mode, "huge"))
		for (long i = 0; i < n; i++)
			sink = malloc(huge); /* fails, but was requested */
	if (!strcmp(mode, "name"))
		prctl(PR_SET_NAME, "\033[31m\nx");
	calls(n);
	if (!strcmp(mode, "alloc"))
		return (int)m;
	if (!strcmp(mode, "huge") || !strcmp(mode, "name"))
		return 0;
	if (!strcmp(mode, "forkexit")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			calls(m);
			_exit(7);
		}
		int st;
		return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
			       WEXITSTATUS(st) == 7
			   ? 0
			   : 3;
	}
	if (!strcmp(mode, "exec")) {
		execl("/proc/self/exe", argv[0], "alloc", argv[3], "0", (char *)NULL);
		return 3;
	}
	if (!strcmp(mode, "execfork") && argc > 4) {
		execl("/proc/self/exe", argv[0], "forkfirst", argv[3], argv[4], (char *)NULL);
		return 3;
	}
	if (!strcmp(mode, "execstatus")) {
		execl("/proc/self/exe", argv[0], "alloc", "0", argv[3], (char *)NULL);
		return 3;
	}
	if (!strcmp(mode, "orphan")) {
		int fds[2]; /* (the grandchild holds the write end until it ends) */
		if (pipe(fds))
			return 3;
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			pid_t me = getpid();
			calls(m);
			if (fork() == 0) {
				while (getppid() == me)
					usleep(1000);
				calls(m);
				_exit(0);
			}
			_exit(0);
		}
		close(fds[1]);
		int st;
		char c;
		if (child < 0 || waitpid(child, &st, 0) != child)
			return 3;
		while (read(fds[0], &c, 1) > 0)
			;
		return 0;
	}
	if (!strcmp(mode, "kill"))
		raise(SIGKILL);
	if (!strcmp(mode, "wait")) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 2;
}
