/* Recording switched on and off through the API, with counts known by construction. Run with
 * MALLOC_FREQ_START=off: N calls at site_before (off), then malloc_freq_enable; threads A and B
 * and main make M calls each (site_on_a, site_on_b, site_on_main); B turns itself off and
 * makes K calls (site_k_b) while A makes K (site_k_a); then malloc_freq_disable, and L calls
 * in main (site_after) and L in thread C, which turns itself on (site_after_c): process-wide
 * off wins. malloc_freq_stats is checked around each region (its deltas are exact: nothing
 * else allocates meanwhile). Prints "tid NAME TID" for main, a, b, c and "off TOTAL", the
 * calls made while off by the end, with write(2) (stdio would allocate). Exits 1 on a wrong
 * delta, naming it. Usage: prog_control N M K L */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "malloc_freq.h"
#include "prog.h"

#pragma weak malloc_freq_enable
#pragma weak malloc_freq_disable
#pragma weak malloc_freq_thread_enable
#pragma weak malloc_freq_thread_disable
#pragma weak malloc_freq_stats

SITE(site_before, 10)
SITE(site_on_main, 20)
SITE(site_on_a, 30)
SITE(site_on_b, 40)
SITE(site_k_a, 50)
SITE(site_k_b, 60)
SITE(site_after, 70)
SITE(site_after_c, 80)

static long n, m, k, l;
static pthread_barrier_t bar;
static int failed;

static void say(const char *fmt, long a, const char *s)
{
	char line[200];
	int len = snprintf(line, sizeof(line), fmt, s, a);
	if (write(1, line, (size_t)len) != len)
		failed = 1;
}

static void stats(struct malloc_freq_stats *s)
{
	if (malloc_freq_stats(s)) {
		say("FAIL %s: malloc_freq_stats returned -1 (%ld)\n", 0, "stats");
		exit(1);
	}
}

/* what: the region; the deltas of calls made off and of malloc calls recorded */
static void expect(const char *what, const struct malloc_freq_stats *a,
		   const struct malloc_freq_stats *b, long off, long recorded)
{
	if ((long)(b->calls_off - a->calls_off) != off) {
		say("FAIL %s: %ld calls off\n", (long)(b->calls_off - a->calls_off), what);
		failed = 1;
	}
	if (recorded >= 0 && (long)(b->calls[0] - a->calls[0]) != recorded) {
		say("FAIL %s: %ld malloc calls recorded\n", (long)(b->calls[0] - a->calls[0]),
		    what);
		failed = 1;
	}
}

static void *thread_a(void *arg)
{
	(void)arg;
	say("tid %s %ld\n", (long)syscall(SYS_gettid), "a");
	for (long i = 0; i < m; i++)
		site_on_a();
	pthread_barrier_wait(&bar); /* (1) all made their M calls */
	pthread_barrier_wait(&bar); /* (2) B is off */
	for (long i = 0; i < k; i++)
		site_k_a();
	pthread_barrier_wait(&bar); /* (3) */
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	say("tid %s %ld\n", (long)syscall(SYS_gettid), "b");
	for (long i = 0; i < m; i++)
		site_on_b();
	pthread_barrier_wait(&bar); /* (1) */
	malloc_freq_thread_disable();
	pthread_barrier_wait(&bar); /* (2) */
	for (long i = 0; i < k; i++)
		site_k_b();
	pthread_barrier_wait(&bar); /* (3) */
	malloc_freq_thread_enable();
	return NULL;
}

static void *thread_c(void *arg)
{
	(void)arg;
	struct malloc_freq_stats s0, s1;
	say("tid %s %ld\n", (long)syscall(SYS_gettid), "c");
	malloc_freq_thread_enable(); /* (the process is off: that wins) */
	stats(&s0);
	for (long i = 0; i < l; i++)
		site_after_c();
	stats(&s1);
	expect("after disable, thread C on", &s0, &s1, l, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: prog_control N M K L\n");
		return 2;
	}
	n = atol(argv[1]), m = atol(argv[2]), k = atol(argv[3]), l = atol(argv[4]);
	if (!malloc_freq_stats) {
		fprintf(stderr, "prog_control: the profiler is not loaded\n");
		return 2;
	}
	struct malloc_freq_stats s0, s1, s2, s3, s4;
	say("tid %s %ld\n", (long)syscall(SYS_gettid), "main");
	pthread_barrier_init(&bar, NULL, 3);
	stats(&s0);
	for (long i = 0; i < n; i++)
		site_before();
	stats(&s1);
	expect("before enable", &s0, &s1, n, 0);
	malloc_freq_enable();
	pthread_t a, b, c;
	if (pthread_create(&a, NULL, thread_a, NULL) || pthread_create(&b, NULL, thread_b, NULL))
		return 1;
	for (long i = 0; i < m; i++)
		site_on_main();
	pthread_barrier_wait(&bar); /* (1) */
	stats(&s2);
	pthread_barrier_wait(&bar); /* (2) */
	pthread_barrier_wait(&bar); /* (3) */
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	stats(&s3);
	expect("thread B off, A on", &s2, &s3, k, -1);
	if (s3.calls[0] - s2.calls[0] < (uint64_t)k) {
		say("FAIL %s: %ld malloc calls recorded\n", (long)(s3.calls[0] - s2.calls[0]),
		    "A on");
		failed = 1;
	}
	if (s3.threads != s1.threads + 2 || s1.threads < 1) {
		say("FAIL %s: %ld threads\n", (long)s3.threads, "threads seen");
		failed = 1;
	}
	malloc_freq_disable();
	stats(&s3);
	for (long i = 0; i < l; i++)
		site_after();
	stats(&s4);
	expect("after disable", &s3, &s4, l, 0);
	if (pthread_create(&c, NULL, thread_c, NULL))
		return 1;
	pthread_join(c, NULL);
	stats(&s4);
	say("%soff %ld\n", (long)s4.calls_off, "");
	say("%sthreads %ld\n", (long)s4.threads, "");
	return failed;
}
