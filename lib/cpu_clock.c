/* A thread's CPU time for MALLOC_FREQ_WEIGHT=time, read twice per recorded call: wall time since
 * the thread's previous read while that gap is too short for the thread to have been off its
 * CPU for much of it, and the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, a system call) after
 * a longer one. Wall time is the processor's counter (mf_ticks, lib/arch/: the time-stamp
 * counter on x86-64 where the CPU says it is invariant, CNTVCT_EL0 on arm64), scaled by its rate
 * against CLOCK_MONOTONIC, measured once; else CLOCK_MONOTONIC (in the vDSO). A
 * program that allocates often pays no system call; one that allocates rarely pays one per
 * call, which is little beside the time between its calls.
 * Runs inside malloc: no malloc, no stdio, no lock; errno preserved. Never reads the
 * time-stamp counter once the program asked for rdtsc to fault (prctl PR_SET_TSC). */
#include "config.h"

#include <errno.h>
#include <time.h>

#include "cpu_clock.h"
#include "mf_internal.h"

enum { MF_CPU_CLOCK_UNMEASURED, MF_CPU_CLOCK_TSC, MF_CPU_CLOCK_WALL, MF_CPU_CLOCK_CPU_ONLY };

static int mf_cpu_clock_mode;	    /* how threads read: one of the above */
static int mf_cpu_clock_tsc_off;    /* the program asked for rdtsc to fault */
static uint64_t mf_cpu_clock_own;   /* ns of the profiler's own per recorded call, outside */
static uint64_t mf_cpu_clock_scale; /* MF_CPU_CLOCK_TSC: ns per tick, << 32 */
static uint64_t mf_cpu_clock_trust; /* MF_CPU_CLOCK_TRUST_NS in this mode's units */

/* A moment read on both clocks: in *w CLOCK_MONOTONIC, in *t the counter read halfway through
 * that read, the tightest of a few tries. A thread preempted between a counter read and the wall
 * read beside it would skew the rate by the time it was off its CPU (a few ms of a 50 us spin:
 * a rate many times too fast, and every short gap charged as many times over): the pair whose
 * counter reads lie closest around the wall read is the one least disturbed. */
static void mf_cpu_clock_moment(uint64_t *t, uint64_t *w)
{
	uint64_t least = UINT64_MAX;
	for (int r = 0; r < 5; r++) {
		uint64_t a = mf_ticks(), wall = mf_clock_ns(CLOCK_MONOTONIC), b = mf_ticks();
		if (b >= a && b - a < least) {
			least = b - a;
			*t = a + (b - a) / 2;
			*w = wall;
		}
	}
}

/* The counter's ns per tick << 32, if it runs at one rate whatever the CPU's state
 * (mf_ticks_constant) and the program lets it be read; 0 if not. Its rate
 * against CLOCK_MONOTONIC over a short spin (both count time the thread is preempted alike),
 * and in *cost the ns a read of it takes. */
static uint64_t mf_cpu_clock_tsc_rate(uint64_t *cost)
{
	if (__atomic_load_n(&mf_cpu_clock_tsc_off, __ATOMIC_RELAXED) || !mf_ticks_constant())
		return 0;
	enum { SPIN_NS = 50000, READS = 16 };
	uint64_t t0 = 0, w0 = 0, t1 = 0, w1 = 0;
	mf_cpu_clock_moment(&t0, &w0);
	do
		mf_cpu_clock_moment(&t1, &w1);
	while (w1 >= w0 && w1 - w0 < SPIN_NS);
	if (t1 <= t0 || w1 <= w0)
		return 0;
	uint64_t least = UINT64_MAX;
	for (int r = 0; r < 5; r++) {
		volatile uint64_t sink = 0;
		uint64_t a0 = mf_ticks();
		for (int i = 0; i < READS - 1; i++)
			sink += mf_ticks();
		uint64_t a1 = mf_ticks();
		(void)sink;
		if (a1 - a0 < least)
			least = a1 - a0;
	}
	uint64_t scale = ((w1 - w0) << 32) / (t1 - t0);
	*cost = ((least * scale) >> 32) / READS;
	return scale;
}

/* The clocks' costs, the least of a few rounds (a round the thread was preempted in is longer):
 * a wall clock read, and a read of the CPU clock. */
void mf_cpu_clock_no_tsc(void)
{
	__atomic_store_n(&mf_cpu_clock_tsc_off, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&mf_cpu_clock_mode, MF_CPU_CLOCK_CPU_ONLY, __ATOMIC_RELEASE);
}

static int mf_cpu_clock_measure(void)
{
	if (__atomic_load_n(&mf_cpu_clock_tsc_off, __ATOMIC_SEQ_CST))
		return MF_CPU_CLOCK_CPU_ONLY; /* (the vDSO's clocks read the counter too) */
	enum { ROUNDS = 5, READS = 16 };
	uint64_t wall = UINT64_MAX, cpu = UINT64_MAX;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t a = mf_clock_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < READS - 1; i++)
			mf_clock_ns(CLOCK_MONOTONIC);
		uint64_t b = mf_clock_ns(CLOCK_MONOTONIC);
		if (b - a < wall)
			wall = b - a;
		a = mf_clock_ns(CLOCK_MONOTONIC);
		mf_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		b = mf_clock_ns(CLOCK_MONOTONIC);
		if (b - a < cpu)
			cpu = b - a;
	}
	wall /= READS; /* (READS reads between the first and the last) */
	cpu = cpu > wall ? cpu - wall : 0;
	/* What a read of the CPU clock adds to what it reads next, as it counts it: the median of
	 * a few back-to-back pairs (a system call's cost varies more than a counter's). */
	uint64_t pair[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t a = mf_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		pair[r] = mf_clock_ns(CLOCK_THREAD_CPUTIME_ID) - a;
		for (int i = r; i > 0 && pair[i - 1] > pair[i]; i--) {
			uint64_t x = pair[i];
			pair[i] = pair[i - 1];
			pair[i - 1] = x;
		}
	}
	int mode = MF_CPU_CLOCK_WALL;
	uint64_t own = wall, tsc = mf_cpu_clock_tsc_rate(&own);
	if (tsc && own < wall) {
		mode = MF_CPU_CLOCK_TSC;
		__atomic_store_n(&mf_cpu_clock_scale, tsc, __ATOMIC_RELAXED);
		__atomic_store_n(&mf_cpu_clock_trust, ((uint64_t)MF_CPU_CLOCK_TRUST_NS << 32) / tsc,
				 __ATOMIC_RELAXED);
	} else {
		own = wall;
		__atomic_store_n(&mf_cpu_clock_trust, MF_CPU_CLOCK_TRUST_NS, __ATOMIC_RELAXED);
	}
	if (!mf_clock_ns(CLOCK_MONOTONIC) || wall * 4 > cpu) {
		mode = MF_CPU_CLOCK_CPU_ONLY;
		MF_LOG_ONCE(
		    "MALLOC_FREQ_WEIGHT=time: this machine's clock takes a system call to read "
		    "(%llu ns, no vDSO for its clock source): each recorded call reads the "
		    "thread's CPU clock twice, at %llu ns a read",
		    (unsigned long long)wall, (unsigned long long)cpu);
	}
	/* Two reads per recorded call: the part of the one on the way out after its reading and
	 * the part of the next one before its reading are the program's time to the clock. */
	__atomic_store_n(&mf_cpu_clock_own, mode == MF_CPU_CLOCK_CPU_ONLY ? pair[ROUNDS / 2] : own,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&mf_cpu_clock_mode, mode, __ATOMIC_RELEASE);
	if (__atomic_load_n(&mf_cpu_clock_tsc_off, __ATOMIC_SEQ_CST)) /* (said meanwhile) */
		mf_cpu_clock_no_tsc();
	return __atomic_load_n(&mf_cpu_clock_mode, __ATOMIC_ACQUIRE);
}

uint64_t mf_cpu_clock_read(struct mf_cpu_clock *c)
{
	int mode = __atomic_load_n(&mf_cpu_clock_mode, __ATOMIC_ACQUIRE);
	if (mf_unlikely(mode == MF_CPU_CLOCK_UNMEASURED))
		mode = mf_cpu_clock_measure();
	if (mf_unlikely(mode == MF_CPU_CLOCK_CPU_ONLY))
		return mf_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	int tsc = mode == MF_CPU_CLOCK_TSC;
	uint64_t wall = tsc ? mf_ticks() : mf_clock_ns(CLOCK_MONOTONIC);
	if (mf_likely(c->wall && wall - c->wall < mf_cpu_clock_trust)) {
		c->cpu += tsc ? ((wall - c->wall) * mf_cpu_clock_scale) >> 32 : wall - c->wall;
	} else {
		uint64_t cpu = mf_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if (c->wall && cpu < c->cpu) /* (charged already: the next charges give it back) */
			c->owed += c->cpu - cpu;
		c->cpu = cpu;
		/* (as the CPU clock was read) */
		wall = tsc ? mf_ticks() : mf_clock_ns(CLOCK_MONOTONIC);
	}
	c->wall = wall;
	return c->cpu;
}

uint64_t mf_cpu_clock_charge(struct mf_cpu_clock *c, uint64_t came, uint64_t left)
{
	uint64_t own = __atomic_load_n(&mf_cpu_clock_own, __ATOMIC_RELAXED);
	uint64_t ran = came > left + own ? came - left - own : 0;
	if (mf_unlikely(c->owed)) {
		uint64_t paid = ran < c->owed ? ran : c->owed;
		c->owed -= paid;
		ran -= paid;
	}
	return ran;
}
