/* Runs a command and prints how it ended: "exit N" or "signal N core C" (C: 1 if the kernel
 * dumped core). The shell cannot tell whether a core was dumped. Its core limit is raised to
 * unlimited first, unless -k keeps it as it is. Usage: run_status [-k] CMD... */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int keep = argc > 1 && !strcmp(argv[1], "-k");
	argc -= keep, argv += keep;
	if (argc < 2)
		return 2;
	struct rlimit core = {RLIM_INFINITY, RLIM_INFINITY};
	if (!keep)
		setrlimit(RLIMIT_CORE, &core);
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	if (WIFEXITED(st))
		printf("exit %d\n", WEXITSTATUS(st));
	else
		printf("signal %d core %d\n", WTERMSIG(st), WCOREDUMP(st) ? 1 : 0);
	return 0;
}
