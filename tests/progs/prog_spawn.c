/* Processes made every way, each child allocating a known number of times:
 *   storm N      4 threads fork N children each, at the same time; each child calls
 *                site_child 100 times and _exits; the threads call site_parent 100 times
 *                between forks
 *   spawn PROG   posix_spawn, vfork+exec and system() each run "PROG 321 _exit"
 *   chain K      exec itself K times; image k calls site_image 100 * (k + 1) times
 * Usage: prog_spawn MODE ARG */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static __thread void *volatile sink;
static long forks;

#define SITE(name, size)                                                                           \
	__attribute__((noinline)) static void name(void)                                           \
	{                                                                                          \
		sink = malloc(size);                                                               \
		free(sink);                                                                        \
	}
SITE(site_child, 16)
SITE(site_parent, 24)
SITE(site_image, 32)

static void *forker(void *arg)
{
	(void)arg;
	for (long i = 0; i < forks; i++) {
		for (int k = 0; k < 100; k++)
			site_parent();
		pid_t pid = fork();
		if (pid == 0) {
			for (int k = 0; k < 100; k++)
				site_child();
			_exit(0);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			abort();
	}
	return NULL;
}

static int wait_ok(pid_t pid)
{
	int st;
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 3;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "storm")) {
		forks = atol(argv[2]);
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, forker, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (!strcmp(argv[1], "spawn")) {
		char *args[] = {argv[2], "321", "_exit", NULL};
		pid_t pid;
		int ok = posix_spawn(&pid, argv[2], NULL, NULL, args, environ) == 0 && wait_ok(pid);
		pid = vfork();
		if (pid == 0) {
			execv(argv[2], args);
			_exit(127);
		}
		ok = ok && wait_ok(pid);
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "'%s' 321 _exit", argv[2]);
		int st = system(cmd);
		ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 3;
		printf("spawned: %s\n", ok ? "ok" : "failed");
		return ok ? 0 : 1;
	}
	if (!strcmp(argv[1], "chain")) {
		int k = atoi(argv[2]);
		for (int i = 0; i < 100 * (k + 1); i++)
			site_image();
		if (k == 0)
			return 0;
		char next[16];
		snprintf(next, sizeof(next), "%d", k - 1);
		execl("/proc/self/exe", argv[0], "chain", next, (char *)NULL);
		return 3;
	}
	return 2;
}
