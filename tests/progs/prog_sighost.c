/* Signal handlers of the program that meet the profiler in the middle of its work:
 *   unwind N PLUGIN  a SIGPROF handler every 100 us takes a backtrace with libunwind (as a CPU
 *                    profiler does) while main allocates at many depths and, N times (and
 *                    until 50 signals came), loads and unloads PLUGIN with SIGPROF blocked
 *                    (so the profiler confirms its rules with libunwind again): no deadlock
 *                    on libunwind's locks
 *   fork N           a timer handler forks; the child returns from the handler into whatever
 *                    main was doing (allocating, maybe inside the profiler), allocates more
 *                    and exits 0; main reaps N children. The timer is one shot, armed again
 *                    by the handler after its fork: a fork can take longer than the 500 us,
 *                    and a periodic timer then had the next handler run as each returned,
 *                    main never (no child reaped, thousands forked)
 * Prints what it saw. Usage: prog_sighost MODE N [PLUGIN] */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
static void *volatile sink;
static volatile sig_atomic_t in_child, handled;

NOINLINE static void leaf(int n)
{
	sink = malloc(16 + (size_t)n);
	free(sink);
}

NOINLINE static void down(int d, int n)
{
	if (d) {
		down(d - 1, n);
		__asm__ volatile("" ::: "memory");
	} else {
		leaf(n);
	}
}

static void on_prof(int sig)
{
	(void)sig;
	void *pcs[64];
	unw_backtrace(pcs, 64);
	handled++;
}

/* A timer every us microseconds (once if not every). */
static void timer(int which, long us, int every)
{
	struct itimerval it = {{0, every ? us : 0}, {0, us}};
	setitimer(which, &it, NULL);
}

static void on_alarm(int sig)
{
	(void)sig;
	if (in_child)
		return;
	if (fork() == 0)
		in_child = 1;
	else
		timer(ITIMER_REAL, 500, 0);
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 100;
	if (!strcmp(mode, "unwind") && argc > 3) {
		handle(SIGPROF, on_prof);
		timer(ITIMER_PROF, 100, 1);
		/* SIGPROF blocked around dlopen and dlclose: the handler's dl_iterate_phdr could
		 * wait for ever on the loader's lock they hold, profiler or not (rarely: a signal
		 * at the moment that lock is let go). The profiler's own walks block signals. */
		sigset_t prof, old;
		sigemptyset(&prof);
		sigaddset(&prof, SIGPROF);
		for (long i = 0; i < n || (handled < 50 && i < 1000 * n); i++) {
			sigprocmask(SIG_BLOCK, &prof, &old);
			void *h = dlopen(argv[3], RTLD_NOW);
			if (h)
				dlclose(h);
			sigprocmask(SIG_SETMASK, &old, NULL);
			for (int k = 0; k < 20; k++)
				down(k, k);
		}
		timer(ITIMER_PROF, 0, 1);
		printf("unwind done%s\n", handled >= 50 ? "" : " (fewer than 50 signals came)");
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		int bad = 0, reaped = 0;
		handle(SIGALRM, on_alarm);
		timer(ITIMER_REAL, 500, 0);
		for (long i = 0; reaped < n; i++) {
			down((int)(i % 30), (int)i);
			if (in_child) {
				for (int k = 0; k < 100; k++)
					down(k % 30, k);
				_exit(0);
			}
			int st;
			while (waitpid(-1, &st, WNOHANG) > 0) {
				reaped++;
				bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
			}
		}
		sigset_t alarm;
		sigemptyset(&alarm);
		sigaddset(&alarm, SIGALRM);
		sigprocmask(SIG_BLOCK, &alarm, NULL); /* no fork after this point */
		timer(ITIMER_REAL, 0, 0);
		if (in_child) /* forked after the last reap: says nothing */
			_exit(0);
		while (wait(NULL) > 0)
			;
		printf("fork done: %d children did not exit 0\n", bad);
		return 0;
	}
	fprintf(stderr, "usage: prog_sighost unwind N PLUGIN | fork N\n");
	return 2;
}
