/* Snapshots between phases of known sizes. "phases P1 P2 P3": thread T1 and main make P1
 * calls each at site_p1 (T1 then ends), snapshot "one"; main and thread T2 make P2 calls each
 * at site_p2 (T2 then waits, alive), snapshot "two"; main makes P3 calls at site_p3. "reset A
 * B": A calls at site_a, malloc_freq_reset, B calls at site_b; prints "stats MALLOC-CALLS" as
 * malloc_freq_stats gives them after. Prints each snapshot's number ("snap LABEL N"), with
 * write(2). "killed N": N calls at site_a, snapshot "before-kill", N at site_b, SIGKILL.
 * "signals N" (see by_signals), "busy SECONDS" (4 threads allocating), "handler" (the
 * program's own handler for SIGUSR2 runs), "exact N" (N snapshots "exact" taken by main, back
 * to back, while 4 threads allocate without pause: each call of site_p1, site_p2, site_p3 and
 * site_a asks for its site's size). "mixed N": in tag "work", N temporaries at site_a and N
 * kept blocks at site_kept of 1 << (i % 10) bytes (ten size buckets), then snapshot "idle",
 * and nothing more: it returns with the blocks live. "workers N W SECONDS" (see workers): a
 * pre-forking server. "growing N": N snapshots taken by main, back to back, while 2 threads
 * each start short threads one after another, each of which calls site_grown from 300
 * distinct stacks (its file grows as it goes); prints "snapshots N" and the short threads'
 * calls ("grown CALLS"). "ended N" (see ended). "until FILE": main calls site_p1 100 times a
 * millisecond until FILE exists, and prints "calls N". "churn K N C R KILL [KEEP]" (see
 * churn).
 * Exits 1 if a call fails.
 * Usage: prog_snapshot phases P1 P2 P3 | reset A B | killed N | signals N | busy S | handler |
 *        exact N | mixed N | workers N W SECONDS | growing N | ended N | until FILE |
 *        churn K N C R KILL [KEEP] */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "malloc_freq.h"
#include "prog.h"

#pragma weak malloc_freq_snapshot
#pragma weak malloc_freq_reset
#pragma weak malloc_freq_stats
#pragma weak malloc_freq_dir
#pragma weak malloc_freq_tag_push
#pragma weak malloc_freq_tag_pop

SITE(site_p1, 16)
SITE(site_p2, 32)
SITE(site_p3, 64)
SITE(site_a, 8)
SITE(site_b, 24)

static long p1, p2;
static pthread_barrier_t bar;

static void say(const char *what, long n)
{
	char line[128];
	int len = snprintf(line, sizeof(line), "%s %ld\n", what, n);
	if (write(1, line, (size_t)len) != len)
		exit(1);
}

static void snap(const char *label)
{
	int n = malloc_freq_snapshot(label);
	if (n < 0) {
		fprintf(stderr, "prog_snapshot: malloc_freq_snapshot: %s\n", strerror(errno));
		exit(1);
	}
	say(label, n);
}

static void *t1(void *arg)
{
	(void)arg;
	for (long i = 0; i < p1; i++)
		site_p1();
	return NULL;
}

static void *t2(void *arg)
{
	(void)arg;
	for (long i = 0; i < p2; i++)
		site_p2();
	pthread_barrier_wait(&bar); /* done */
	pthread_barrier_wait(&bar); /* alive during snapshot two */
	return NULL;
}

/* Waits (10 s at most) for the snapshot directory name to appear in the profile directory. */
static int appeared(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", malloc_freq_dir(), name);
	for (int i = 0; i < 10000; i++) {
		if (access(path, F_OK) == 0)
			return 1;
		usleep(1000);
	}
	return 0;
}

/* Started off with MALLOC_FREQ_TOGGLE_SIGNAL=USR1 and MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2: n
 * calls at site_a (off), SIGUSR1, n at site_b (on), SIGUSR2 (snapshot 1, waited for), SIGUSR1,
 * n at site_p3 (off). */
static int by_signals(long n)
{
	for (long i = 0; i < n; i++)
		site_a();
	raise(SIGUSR1);
	for (long i = 0; i < n; i++)
		site_b();
	raise(SIGUSR2);
	if (!appeared("snap.1.signal")) {
		fprintf(stderr, "prog_snapshot: no snap.1.signal after SIGUSR2\n");
		return 1;
	}
	raise(SIGUSR1);
	for (long i = 0; i < n; i++)
		site_p3();
	return 0;
}

static double busy_secs;
static void *busy(void *arg)
{
	(void)arg;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100; i++)
			site_p1();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < busy_secs);
	return NULL;
}

static int exact_stop;
static void *exact_worker(void *arg)
{
	(void)arg;
	for (int ready = 0; !__atomic_load_n(&exact_stop, __ATOMIC_RELAXED); ready = 1) {
		site_p1();
		site_p2();
		site_p3();
		site_a();
		if (!ready) /* (every site made before the first snapshot) */
			pthread_barrier_wait(&bar);
	}
	return NULL;
}

/* n snapshots labelled label, back to back: 0, or 1 (said on stderr) */
static int snap_n(const char *label, long n)
{
	for (long i = 0; i < n; i++)
		if (malloc_freq_snapshot(label) < 0) {
			fprintf(stderr, "prog_snapshot: malloc_freq_snapshot: %s\n",
				strerror(errno));
			return 1;
		}
	return 0;
}

static int exact(long n)
{
	pthread_t t[4];
	pthread_barrier_init(&bar, NULL, 5);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, exact_worker, NULL))
			return 1;
	pthread_barrier_wait(&bar);
	if (snap_n("exact", n))
		return 1;
	__atomic_store_n(&exact_stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	say("snapshots", n);
	return 0;
}

SITE(site_grown, 40) /* (a size no other site asks: its own code) */
enum { GROWN_STACKS = 300, GROWN_DEPTH = 10 };
static long grown_threads;

static void *grown_thread(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < GROWN_STACKS; i++)
		prog_path0(GROWN_DEPTH, i * 2654435761u >> (32 - GROWN_DEPTH), site_grown);
	return NULL;
}

static void *grown_starter(void *arg)
{
	(void)arg;
	pthread_t t;
	while (!__atomic_load_n(&exact_stop, __ATOMIC_RELAXED))
		if (!pthread_create(&t, NULL, grown_thread, NULL) && !pthread_join(t, NULL))
			__atomic_add_fetch(&grown_threads, 1, __ATOMIC_RELAXED);
	return NULL;
}

static int growing(long n)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, grown_starter, NULL))
			return 1;
	if (snap_n("growing", n))
		return 1;
	__atomic_store_n(&exact_stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	say("snapshots", n);
	say("grown", grown_threads * GROWN_STACKS);
	return 0;
}

__attribute__((noinline)) static void *site_kept(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory"); /* (a frame of its own: no tail call) */
	return p;
}

static int mixed(long n)
{
	void **kept = calloc((size_t)n, sizeof(*kept));
	if (!kept)
		return 1;
	malloc_freq_tag_push("work");
	for (long i = 0; i < n; i++) {
		site_a();
		if (!(kept[i] = site_kept((size_t)1 << (i % 10))))
			return 1;
	}
	malloc_freq_tag_pop();
	snap("idle");
	return 0; /* (kept stays live: what the snapshot saw is what the end sees) */
}

/* "ended N": a thread keeps N blocks of site_kept and ends; snapshot "ended"; main frees
 * them; snapshot "freed". */
static void **ended_kept;
static long ended_n;
static void *ended_thread(void *arg)
{
	(void)arg;
	for (long i = 0; i < ended_n; i++)
		ended_kept[i] = site_kept(40);
	return NULL;
}

static int ended(long n)
{
	pthread_t t;
	ended_n = n;
	if (!(ended_kept = calloc((size_t)n, sizeof(*ended_kept))) ||
	    pthread_create(&t, NULL, ended_thread, NULL) || pthread_join(t, NULL))
		return 1;
	snap("ended");
	for (long i = 0; i < n; i++)
		free(ended_kept[i]);
	snap("freed");
	return 0;
}

static volatile sig_atomic_t worker_stop;
static void worker_on_term(int sig)
{
	(void)sig;
	worker_stop = 1;
}

/* A master that makes n calls at site_a ("master PID"), then forks w workers with fork():
 * worker k (1..w) makes k * n calls at site_b, says "worker K PID" and waits, allocating
 * nothing, for SIGTERM or the end of secs seconds, then exits 0. The master waits for them
 * all: 0 if each exited 0. */
static int workers(long n, int w, double secs)
{
	for (long i = 0; i < n; i++)
		site_a();
	say("master", (long)getpid());
	signal(SIGTERM, worker_on_term);
	for (int k = 1; k <= w; k++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			for (long i = 0; i < k * n; i++)
				site_b();
			char what[32];
			snprintf(what, sizeof(what), "worker %d", k);
			say(what, (long)getpid());
			struct timespec tick = {0, 10000000};
			for (long t = 0; !worker_stop && t < (long)(secs * 100); t++)
				nanosleep(&tick, NULL);
			exit(0);
		}
	}
	int bad = 0, status;
	for (int k = 0; k < w; k++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	return bad;
}

static long churn_calls;
static void *churn_thread(void *arg)
{
	(void)arg;
	for (long i = 0; i < churn_calls; i++)
		site_a();
	return NULL;
}

/* Started with MALLOC_FREQ_SNAPSHOT_SIGNAL=USR2: N rounds, each K short threads one after
 * another making C calls at site_a, main C calls at site_b in odd rounds, malloc_freq_reset
 * after round R's calls (0: none), with KEEP > 0 a block of KEEP bytes kept at site_kept (with
 * lifetimes, a new maximum of the process's live bytes each round), then SIGUSR2 and a wait
 * for its snapshot. Prints each snapshot's number ("signal N", "reset N"); KILL 1: ends by
 * SIGKILL. */
static int churn(long k, long n, long c, long r, int kill, long keep)
{
	churn_calls = c;
	long taken = 0;
	for (long i = 1; i <= n; i++) {
		for (long t = 0; t < k; t++) {
			pthread_t th;
			if (pthread_create(&th, NULL, churn_thread, NULL))
				return 1;
			pthread_join(th, NULL);
		}
		for (long x = 0; i % 2 && x < c; x++)
			site_b();
		if (keep > 0 && !site_kept((size_t)keep))
			return 1;
		if (i == r) {
			if ((taken = malloc_freq_reset()) < 0)
				return 1;
			say("reset", taken);
		}
		char name[64];
		snprintf(name, sizeof(name), "snap.%ld.signal", ++taken);
		raise(SIGUSR2);
		if (!appeared(name)) {
			fprintf(stderr, "prog_snapshot: no %s after SIGUSR2\n", name);
			return 1;
		}
		say("signal", taken);
	}
	if (kill)
		raise(SIGKILL);
	return 0;
}

static volatile sig_atomic_t own_ran;
static void own_handler(int sig)
{
	(void)sig;
	own_ran = 1;
}

int main(int argc, char **argv)
{
	if (!malloc_freq_snapshot) {
		fprintf(stderr, "prog_snapshot: the profiler is not loaded\n");
		return 2;
	}
	if (argc == 5 && !strcmp(argv[1], "phases")) {
		p1 = atol(argv[2]), p2 = atol(argv[3]);
		long p3 = atol(argv[4]);
		pthread_t a, b;
		pthread_barrier_init(&bar, NULL, 2);
		if (pthread_create(&a, NULL, t1, NULL))
			return 1;
		for (long i = 0; i < p1; i++)
			site_p1();
		pthread_join(a, NULL);
		snap("one");
		if (pthread_create(&b, NULL, t2, NULL))
			return 1;
		for (long i = 0; i < p2; i++)
			site_p2();
		pthread_barrier_wait(&bar);
		snap("two");
		pthread_barrier_wait(&bar);
		pthread_join(b, NULL);
		for (long i = 0; i < p3; i++)
			site_p3();
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "reset")) {
		long a = atol(argv[2]), b = atol(argv[3]);
		for (long i = 0; i < a; i++)
			site_a();
		int n = malloc_freq_reset();
		if (n < 0)
			return 1;
		say("reset", n);
		for (long i = 0; i < b; i++)
			site_b();
		struct malloc_freq_stats s;
		if (malloc_freq_stats(&s))
			return 1;
		say("stats", (long)s.calls[0]);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "killed")) { /* N calls, a snapshot, N more, SIGKILL */
		long n = atol(argv[2]);
		for (long i = 0; i < n; i++)
			site_a();
		snap("before-kill");
		for (long i = 0; i < n; i++)
			site_b();
		raise(SIGKILL);
	}
	if (argc == 3 && !strcmp(argv[1], "signals")) /* (SIGUSR1 toggles, SIGUSR2 snapshots) */
		return by_signals(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "busy")) { /* 4 threads allocate for SECONDS */
		pthread_t t[4];
		busy_secs = atof(argv[2]);
		say("ready",
		    (long)getpid()); /* (main runs: the profiler's handlers are in place) */
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, busy, NULL))
				return 1;
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "exact"))
		return exact(atol(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "handler")) { /* the program's own SIGUSR2 handler */
		signal(SIGUSR2, own_handler);
		raise(SIGUSR2);
		say("own handler ran", own_ran);
		return own_ran ? 0 : 1;
	}
	if (argc == 3 && !strcmp(argv[1], "mixed"))
		return mixed(atol(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "workers"))
		return workers(atol(argv[2]), atoi(argv[3]), atof(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "growing"))
		return growing(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "ended"))
		return ended(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "until")) {
		long calls = 0;
		struct timespec ms = {0, 1000000};
		for (; access(argv[2], F_OK) != 0; calls += 100) {
			for (int i = 0; i < 100; i++)
				site_p1();
			nanosleep(&ms, NULL);
		}
		say("calls", calls);
		return 0;
	}
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "churn"))
		return churn(atol(argv[2]), atol(argv[3]), atol(argv[4]), atol(argv[5]),
			     atoi(argv[6]), argc == 8 ? atol(argv[7]) : 0);
	fprintf(stderr, "usage: prog_snapshot phases P1 P2 P3 | reset A B | killed N | signals N | "
			"busy SECONDS | handler | exact N | mixed N | workers N W SECONDS | "
			"growing N | ended N | until FILE | churn K N C R KILL [KEEP]\n");
	return 2;
}
