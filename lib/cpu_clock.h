/* cpu_clock.c: a thread's CPU time for MALLOC_FREQ_WEIGHT=time, read without a system call
 * while the thread keeps running. Included by the files that weigh calls by time. */
#ifndef MF_CPU_CLOCK_H
#define MF_CPU_CLOCK_H

#include <stdint.h>

/* A gap of wall time shorter than this since the thread's previous read is taken as CPU time
 * (the thread can have been off its CPU for less than that of it); a longer one is read from
 * the thread's CPU clock, with a system call. */
#define MF_CPU_CLOCK_TRUST_NS 50000u

/* One thread's clock, zeroed at the thread's start (its first read is a system call). */
struct mf_cpu_clock {
	uint64_t cpu;  /* the thread's CPU time at its previous read, in ns */
	uint64_t wall; /* wall time then (time-stamp counter or CLOCK_MONOTONIC); 0: no read yet */
	/* Wall time taken as CPU time that a later read of the CPU clock showed the thread did
	 * not run (preempted in a short gap): taken off the next charges. */
	uint64_t owed;
};

/* The calling thread's CPU time in ns, c its clock (no other thread's); 0 if no clock can be
 * read. Never decreases but when a system call reads less than wall time had added up (the
 * difference is then owed, and mf_cpu_clock_charge takes it off).
 * errno preserved. The first read in a process measures the clocks (a few microseconds); if
 * the wall clock costs a system call too (no vDSO for the machine's clock source), says so
 * once on stderr and reads the CPU clock every time. */
uint64_t mf_cpu_clock_read(struct mf_cpu_clock *c);

/* The program asks for rdtsc to fault (prctl PR_SET_TSC): from now on every read is of the
 * CPU clock (the vDSO's wall clocks read the time-stamp counter too). */
void mf_cpu_clock_no_tsc(void);

/* The program's CPU time between the profiler's return from one recorded call (left) and its
 * entry into the next (came), both read by mf_cpu_clock_read from c: came - left less the
 * profiler's own time per recorded call that lies outside those reads (the reads' own cost
 * included), as measured at the process's first read, less what c owes; 0 if no more than
 * that. So a thread's charges together never exceed its CPU time as last read by a system
 * call, plus what wall time has added since. */
uint64_t mf_cpu_clock_charge(struct mf_cpu_clock *c, uint64_t came, uint64_t left);

#endif
