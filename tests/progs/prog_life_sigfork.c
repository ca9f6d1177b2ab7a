/* Forks from a signal handler with lifetimes on (tests/preload/t_life_sigfork.sh): a timer's handler
 * forks every 2 ms while the main thread allocates and frees in a loop, so most forks
 * interrupt the profiler in its address map. Each child, once the handler has returned,
 * allocates K blocks at site_kept, keeps them and exits 0. The parent waits for every child
 * and prints how many there were and how many did not exit 0 (a signal, or another status).
 * Usage: prog_life_sigfork FORKS */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define K	 100

static volatile sig_atomic_t in_child, forks, max_forks;

NOINLINE static void *site_loop(void)
{
	void *volatile p = malloc(32);
	return p;
}

NOINLINE static void *site_kept(void)
{
	void *volatile p = malloc(48);
	return p;
}

static void on_timer(int sig)
{
	(void)sig;
	if (in_child || forks >= max_forks)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_REAL, &off, NULL);
		in_child = 1;
	} else if (pid > 0) {
		forks++;
	}
}

int main(int argc, char **argv)
{
	max_forks = argc > 1 ? atoi(argv[1]) : 20;
	struct sigaction sa = {0};
	sa.sa_handler = on_timer;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval every = {{0, 2000}, {0, 2000}};
	setitimer(ITIMER_REAL, &every, NULL);
	while (forks < max_forks && !in_child)
		free(site_loop());
	if (in_child) {
		for (int i = 0; i < K; i++)
			(void)site_kept();
		exit(0);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	int status, children = 0, bad = 0;
	pid_t pid;
	while ((pid = wait(&status)) > 0 || (pid < 0 && errno == EINTR)) {
		if (pid < 0)
			continue;
		children++;
		bad += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	printf("%d children, %d did not exit 0\n", children, bad);
	return 0;
}
