/* A server-like workload for a long attached run (tests/bench/server_run.sh): a pool of worker
 * threads serves requests in a loop, a manager thread starts a short-lived worker every two
 * seconds and ends the one before, one request type leaks a block now and then, and every
 * minute brings a ten-second burst. The program counts its own allocation calls, per request
 * site and allocation function, exactly: the counts of each phase (between two pauses) are
 * what a profile attached during one pause and detached during the next must show.
 * Commands on standard input, one a line, each answered on standard output:
 *   p   pause: every worker parks before its next request; then the phase's counts,
 *       "count PHASE SITE FUNCTION N" lines and "total PHASE N", and "paused PHASE"
 *   r   resume ("resumed")
 *   q   end: the workers stop and are joined, the last phase's counts, "end", status 7
 * At start: "start REALTIME_NS burst_period 60 burst_at 40 burst_len 10" (the bursts, in
 * seconds since start). Usage: bench_server [POOL] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE     __attribute__((noinline))
#define BURST_PERIOD 60
#define BURST_AT     40
#define BURST_LEN    10

enum site { S_SMALL, S_PARSE, S_SESSION, S_LEAK, S_ALIGNED, NSITE };
enum entry { E_MALLOC, E_CALLOC, E_REALLOC, E_ALIGNED_ALLOC, NENTRY };
static const char *site_name[NSITE] = {"req_small", "req_parse", "req_session", "req_leak",
				       "req_aligned"};
static const char *entry_name[NENTRY] = {"malloc", "calloc", "realloc", "aligned_alloc"};

static _Atomic unsigned long counts[NSITE][NENTRY];
static unsigned long reported[NSITE][NENTRY];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static atomic_int pausing, stopping;
static int live, parked; /* threads that may allocate; those parked (under lock) */
static struct timespec start;

static __thread void *volatile sink; /* (a block stored here is used: its malloc is kept) */
static void *volatile *leaks;	     /* the leaked blocks (reachable: a leak as a server has one) */
static _Atomic unsigned long nleaks;

static void count(enum site s, enum entry e)
{
	atomic_fetch_add_explicit(&counts[s][e], 1, memory_order_relaxed);
}

NOINLINE static void req_small(unsigned r)
{
	void *b[5];
	for (int i = 0; i < 5; i++) {
		sink = b[i] = malloc(32 + (r >> (i * 3) & 7) * 32);
		count(S_SMALL, E_MALLOC);
	}
	for (int i = 0; i < 5; i++)
		free(b[i]);
}

NOINLINE static void req_parse(unsigned r)
{
	char *p = sink = calloc(1, 64);
	count(S_PARSE, E_CALLOC);
	size_t n = 64;
	for (int i = 0; i < 3 + (int)(r & 1); i++) {
		char *q = realloc(p, n *= 2);
		count(S_PARSE, E_REALLOC);
		if (q)
			sink = p = q;
	}
	free(p);
}

/* The slow leak: one session in eight keeps its 256-byte block. */
NOINLINE static void req_leak(void)
{
	void *p = malloc(256);
	count(S_LEAK, E_MALLOC);
	unsigned long n = atomic_fetch_add(&nleaks, 1);
	if (n < (1ul << 20))
		leaks[n] = p;
}

NOINLINE static void req_session(unsigned r)
{
	if ((r & 7) == 0) {
		req_leak();
		return;
	}
	sink = malloc(256);
	count(S_SESSION, E_MALLOC);
	free(sink);
}

NOINLINE static void req_aligned(void)
{
	sink = aligned_alloc(64, 512);
	count(S_ALIGNED, E_ALIGNED_ALLOC);
	free(sink);
}

static double since_start(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - start.tv_sec) + (t.tv_nsec - start.tv_nsec) / 1e9;
}

static int in_burst(void)
{
	long s = (long)since_start() % BURST_PERIOD;
	return s >= BURST_AT && s < BURST_AT + BURST_LEN;
}

/* Parks the calling thread while a pause lasts; 0 when the program ends. */
static int checkpoint(void)
{
	if (atomic_load(&pausing)) {
		pthread_mutex_lock(&lock);
		parked++;
		pthread_cond_broadcast(&cond);
		while (atomic_load(&pausing))
			pthread_cond_wait(&cond, &lock);
		parked--;
		pthread_mutex_unlock(&lock);
	}
	return !atomic_load(&stopping);
}

static void serve(unsigned *seed, long requests)
{
	for (long i = 0; requests < 0 || i < requests; i++) {
		if (!checkpoint())
			return;
		unsigned r = rand_r(seed);
		switch (r % 10) {
		case 0 ... 4:
			req_small(r >> 4);
			break;
		case 5 ... 6:
			req_parse(r >> 4);
			break;
		case 7 ... 8:
			req_session(r >> 4);
			break;
		default:
			req_aligned();
		}
		/* 2 ms between requests; 0.2 ms in a burst: ten times the rate */
		struct timespec pause = {0, in_burst() ? 200000 : 2000000};
		nanosleep(&pause, NULL);
	}
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(unsigned long)arg;
	serve(&seed, (long)(unsigned long)arg >= 1000 ? 400 : -1);
	pthread_mutex_lock(&lock);
	live--;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Starts a short-lived worker (400 requests) every two seconds, ending the one before. */
static void *manager(void *arg)
{
	(void)arg;
	pthread_t th;
	int have = 0;
	for (unsigned long n = 1000; checkpoint(); n++) {
		if (have)
			pthread_join(th, NULL);
		pthread_mutex_lock(&lock);
		live++;
		pthread_mutex_unlock(&lock);
		have = !pthread_create(&th, NULL, worker, (void *)n);
		if (!have) {
			pthread_mutex_lock(&lock);
			live--;
			pthread_mutex_unlock(&lock);
		}
		for (int i = 0; i < 20 && checkpoint(); i++) {
			struct timespec t = {0, 100000000};
			nanosleep(&t, NULL);
		}
	}
	if (have)
		pthread_join(th, NULL);
	pthread_mutex_lock(&lock);
	live--;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Waits until every thread that may allocate is parked (or gone). */
static void quiesce(void)
{
	pthread_mutex_lock(&lock);
	while (parked < live)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void report(int phase)
{
	unsigned long total = 0;
	for (int s = 0; s < NSITE; s++)
		for (int e = 0; e < NENTRY; e++) {
			unsigned long now = atomic_load(&counts[s][e]), n = now - reported[s][e];
			reported[s][e] = now;
			total += n;
			if (n)
				printf("count %d %s %s %lu\n", phase, site_name[s], entry_name[e],
				       n);
		}
	printf("total %d %lu\n", phase, total);
}

int main(int argc, char **argv)
{
	int pool = argc > 1 ? atoi(argv[1]) : 4, phase = 0;
	char line[64];
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	clock_gettime(CLOCK_REALTIME, &now);
	leaks = malloc(sizeof(void *) << 20);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("start %lld%09ld burst_period %d burst_at %d burst_len %d\n", (long long)now.tv_sec,
	       now.tv_nsec, BURST_PERIOD, BURST_AT, BURST_LEN);
	pthread_t th[64], mgr;
	if (pool < 1 || pool > 64)
		return 2;
	live = pool + 1;
	for (int i = 0; i < pool; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(unsigned long)(i + 1)))
			return 1;
	if (pthread_create(&mgr, NULL, manager, NULL))
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		switch (line[0]) {
		case 'p':
			atomic_store(&pausing, 1);
			quiesce();
			report(phase);
			printf("paused %d\n", phase++);
			break;
		case 'r':
			pthread_mutex_lock(&lock);
			atomic_store(&pausing, 0);
			pthread_cond_broadcast(&cond);
			pthread_mutex_unlock(&lock);
			printf("resumed\n");
			break;
		case 'q':
			atomic_store(&stopping, 1);
			pthread_mutex_lock(&lock);
			atomic_store(&pausing, 0);
			pthread_cond_broadcast(&cond);
			pthread_mutex_unlock(&lock);
			for (int i = 0; i < pool; i++)
				pthread_join(th[i], NULL);
			pthread_join(mgr, NULL);
			report(phase);
			printf("end\n");
			return 7;
		}
	}
	return 3;
}
