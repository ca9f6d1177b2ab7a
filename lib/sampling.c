/* The sampling draw: each thread's random numbers (xorshift64*, seeded from MALLOC_FREQ_SEED or
 * the clock) and the countdown's next value, a geometric interval with mean mf_config.sample.
 * Runs inside malloc: no malloc, no stdio, no lock. */
#include "config.h"

#include <string.h>
#include <time.h>

#include "mf_internal.h"
#include "thread.h"

static uint64_t mf_splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* ln(x) for x > 0 (finite, normal): x = m 2^e with m in [sqrt(1/2), sqrt(2)), and ln(m) =
 * 2 atanh(s) = 2 (s + s^3 / 3 + s^5 / 5 + ...), s = (m - 1) / (m + 1), |s| < 0.172: to
 * s^21, the first term left out is below 2^-60 of the sum. Every sampled call draws one: one
 * division (a series summed until it converged took twelve, 290 instructions a draw). */
static double mf_ln(double x)
{
	uint64_t bits;
	memcpy(&bits, &x, sizeof(bits));
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ~(0x7ffull << 52)) | (1023ull << 52); /* m in [1, 2) */
	double m;
	memcpy(&m, &bits, sizeof(m));
	if (m > 0x1.6a09e667f3bcdp+0) /* sqrt(2) */
		m /= 2, e++;
	double s = (m - 1) / (m + 1), z = s * s;
	double p = ((((1.0 / 21 * z + 1.0 / 19) * z + 1.0 / 17) * z + 1.0 / 15) * z + 1.0 / 13) * z;
	p = (((((p + 1.0 / 11) * z + 1.0 / 9) * z + 1.0 / 7) * z + 1.0 / 5) * z + 1.0 / 3) * z + 1;
	return e * 0x1.62e42fefa39efp-1 + 2 * s * p; /* ln 2 */
}

/* Calls until the next recorded one: geometric with mean mf_config.sample, so each call is
 * recorded with probability 1/sample independently of the others (no aliasing with periodic
 * allocation patterns), and calls x sample is an unbiased estimate. */
long mf_sampling_draw(uint64_t *rng)
{
	if (mf_config.sample <= 1)
		return 1;
	uint64_t x = *rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	double u = (double)(((x * 0x2545f4914f6cdd1dull) >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
	double k = mf_ln(u) / mf_config.sample_log; /* >= 0: its integer part is its floor */
	return k >= 1e12 ? 1000000000000l : 1 + (long)k;
}

/* With MALLOC_FREQ_SEED: the process's part of every thread's seed, and the threads and
 * forks it has started. A forked child's part follows from its parent's and the fork's number
 * there, so that children sample apart from each other and from their parent (they sampled
 * alike), and a run again samples as before. (A thread's seed is mixed twice: seed s's
 * thread k was seed s + k's first thread.) */
static uint64_t mf_seed_salt, mf_seed_threads, mf_seed_forks;

uint64_t mf_sampling_seed(pid_t tid, const void *thread)
{
	uint64_t n = __atomic_fetch_add(&mf_seed_threads, 1, __ATOMIC_RELAXED), rng;
	if (mf_config.have_seed) {
		/* threads in start order */
		rng = mf_splitmix64(mf_splitmix64(mf_config.seed ^ mf_seed_salt) + n);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		rng = mf_splitmix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
				    ((uint64_t)tid << 20) ^ (uintptr_t)thread ^ n);
	}
	return rng ? rng : 1;
}

void mf_sampling_prefork(void)
{
	mf_seed_forks++; /* (forks one at a time: the fork lock is held for writing) */
}

/* A child's sampling seeds apart from its parent's: by the fork's number there, or (a fork
 * without the handlers) its pid. Its first call draws its first interval (the parent's
 * countdown, left in the forking thread's state, depends on where the parent had got to). */
void mf_sampling_postfork_child(int handlers)
{
	uint64_t fork = handlers ? mf_seed_forks : (uint64_t)getpid() << 32;
	mf_seed_salt = mf_splitmix64(mf_seed_salt + fork);
	mf_seed_threads = mf_seed_forks = 0;
	mf_tls.countdown = 0;
}
