/* A thread's CPU time for MALLOC_FREQ_WEIGHT=time, read twice per recorded call: the wall clock
 * (CLOCK_MONOTONIC, read in the vDSO without a system call) since the thread's previous read,
 * while that gap is too short for the thread to have been off its CPU for much of it, and the
 * thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, a system call) after a longer one. A program
 * that allocates often pays no system call; one that allocates rarely pays one per call, which
 * is little beside the time between its calls.
 * Runs inside malloc: no malloc, no stdio, no lock; errno preserved. */
#include "config.h"

#include <errno.h>
#include <time.h>

#include "cpu_clock.h"
#include "mf_internal.h"

enum { MF_CPU_CLOCK_UNMEASURED, MF_CPU_CLOCK_WALL, MF_CPU_CLOCK_CPU_ONLY };

static int mf_cpu_clock_mode;	  /* how threads read: one of the above */
static uint64_t mf_cpu_clock_own; /* ns of the profiler's own per recorded call, outside */

static uint64_t mf_cpu_clock_of(clockid_t id)
{
	struct timespec ts;
	int saved = errno;
	if (clock_gettime(id, &ts)) {
		errno = saved;
		return 0;
	}
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The clocks' costs, the least of a few rounds (a round the thread was preempted in is longer):
 * a wall clock read, and a read of the CPU clock. */
static int mf_cpu_clock_measure(void)
{
	enum { ROUNDS = 5, READS = 16 };
	uint64_t wall = UINT64_MAX, cpu = UINT64_MAX;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t a = mf_cpu_clock_of(CLOCK_MONOTONIC);
		for (int i = 0; i < READS - 1; i++)
			mf_cpu_clock_of(CLOCK_MONOTONIC);
		uint64_t b = mf_cpu_clock_of(CLOCK_MONOTONIC);
		if (b - a < wall)
			wall = b - a;
		a = mf_cpu_clock_of(CLOCK_MONOTONIC);
		mf_cpu_clock_of(CLOCK_THREAD_CPUTIME_ID);
		b = mf_cpu_clock_of(CLOCK_MONOTONIC);
		if (b - a < cpu)
			cpu = b - a;
	}
	wall /= READS; /* (READS reads between the first and the last) */
	cpu = cpu > wall ? cpu - wall : 0;
	int mode = MF_CPU_CLOCK_WALL;
	if (!mf_cpu_clock_of(CLOCK_MONOTONIC) || wall * 4 > cpu) {
		mode = MF_CPU_CLOCK_CPU_ONLY;
		MF_LOG_ONCE(
		    "MALLOC_FREQ_WEIGHT=time: this machine's clock takes a system call to read "
		    "(%llu ns, no vDSO for its clock source): each recorded call reads the "
		    "thread's CPU clock twice, at %llu ns a read",
		    (unsigned long long)wall, (unsigned long long)cpu);
	}
	/* Two reads per recorded call: the part of the one on the way out after its reading and
	 * the part of the next one before its reading are the program's time to the clock. */
	__atomic_store_n(&mf_cpu_clock_own, mode == MF_CPU_CLOCK_WALL ? wall : cpu,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&mf_cpu_clock_mode, mode, __ATOMIC_RELEASE);
	return mode;
}

uint64_t mf_cpu_clock_read(struct mf_cpu_clock *c)
{
	int mode = __atomic_load_n(&mf_cpu_clock_mode, __ATOMIC_ACQUIRE);
	if (mf_unlikely(mode == MF_CPU_CLOCK_UNMEASURED))
		mode = mf_cpu_clock_measure();
	if (mf_unlikely(mode == MF_CPU_CLOCK_CPU_ONLY))
		return mf_cpu_clock_of(CLOCK_THREAD_CPUTIME_ID);
	uint64_t wall = mf_cpu_clock_of(CLOCK_MONOTONIC);
	if (mf_likely(c->wall && wall - c->wall < MF_CPU_CLOCK_TRUST_NS)) {
		c->cpu += wall - c->wall;
	} else {
		c->cpu = mf_cpu_clock_of(CLOCK_THREAD_CPUTIME_ID);
		wall = mf_cpu_clock_of(CLOCK_MONOTONIC); /* (as the CPU clock was read) */
	}
	c->wall = wall;
	return c->cpu;
}

uint64_t mf_cpu_clock_charge(uint64_t came, uint64_t left)
{
	uint64_t own = __atomic_load_n(&mf_cpu_clock_own, __ATOMIC_RELAXED);
	return came > left + own ? came - left - own : 0;
}
