/* A server's rates over a run: a long-lived busy thread makes RATE calls a second (malloc and
 * free, paced by the clock), ten times that in a burst of LEN seconds from AT seconds (calloc
 * then realloc of the block, from one function, then free); a short-lived thread of 50 calls
 * every 50 ms; an idle thread holding 1 MiB from the start to the end; a snapshot (found with
 * dlsym: nothing without the profiler) each second. At the end it prints, times in seconds
 * after main's start: "burst AT END CALLS" (the busy thread's calls in the burst window),
 * "steady CALLS_PER_S" (its rate outside it), "short CALLS SECONDS" (the short threads' calls
 * over the run), "lag SECONDS" (the most the busy thread fell behind its pace).
 * Usage: prog_burst SECONDS AT LEN RATE */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double run, at, len, rate;
static struct timespec t0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int done;
static long short_calls;

static double since(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
}

/* the busy thread's calls due by time s: rate, ten times it in the burst */
static double due(double s)
{
	double in = s < at ? 0 : s < at + len ? s - at : len;
	return rate * s + 9 * rate * in;
}

__attribute__((noinline)) static void site_steady(void)
{
	free(malloc(64));
}

__attribute__((noinline)) static void site_burst(void)
{
	void *p = calloc(1, 64), *q = realloc(p, 128);
	free(q ? q : p);
}

__attribute__((noinline)) static void *site_short(void)
{
	return malloc(32);
}

__attribute__((noinline)) static void *site_kept(void)
{
	return malloc(1 << 20);
}

static void *busy(void *arg)
{
	long calls = 0, in_burst = 0;
	double lag = 0, steady = 0;
	for (double s; (s = since()) < run;) {
		double target = due(s);
		if (target - (double)calls > rate * lag)
			lag = (target - (double)calls) / rate;
		int burst = s >= at && s < at + len;
		while ((double)calls < target) {
			if (burst) {
				site_burst();
				calls += 2;
				in_burst += 2;
			} else {
				site_steady();
				calls++;
				steady++;
			}
		}
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	printf("burst %.3f %.3f %ld\nsteady %.0f\nlag %.3f\n", at, at + len, in_burst,
	       steady / (run - len), lag);
	(void)arg;
	return NULL;
}

static void *brief(void *arg)
{
	void *p[50];
	for (int i = 0; i < 50; i++)
		p[i] = site_short();
	for (int i = 0; i < 50; i++)
		free(p[i]);
	(void)arg;
	return NULL;
}

static void *keeper(void *arg)
{
	volatile char *p = site_kept();
	if (p)
		p[0] = 1;
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&done_cond, &lock);
	pthread_mutex_unlock(&lock);
	(void)arg;
	return NULL; /* (the 1 MiB stays live to the end) */
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: prog_burst SECONDS AT LEN RATE\n");
		return 2;
	}
	run = atof(argv[1]), at = atof(argv[2]), len = atof(argv[3]), rate = atof(argv[4]);
	clock_gettime(CLOCK_REALTIME, &t0);
	int (*snap)(const char *) =
	    (int (*)(const char *))dlsym(RTLD_DEFAULT, "malloc_freq_snapshot");
	pthread_t b, k, s;
	if (pthread_create(&k, NULL, keeper, NULL) || pthread_create(&b, NULL, busy, NULL))
		return 1;
	double next_snap = 1;
	for (double now; (now = since()) < run;) {
		if (pthread_create(&s, NULL, brief, NULL) || pthread_join(s, NULL))
			return 1;
		short_calls += 50;
		if (snap && now >= next_snap) {
			snap(NULL);
			next_snap += 1;
		}
		nanosleep(&(struct timespec){0, 50000000}, NULL);
	}
	pthread_join(b, NULL);
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_signal(&done_cond);
	pthread_mutex_unlock(&lock);
	pthread_join(k, NULL);
	printf("short %ld %.3f\n", short_calls, since());
	return 0;
}
