/* A process's timeline: its threads' running totals (format 9, malloc_freq_format.h; by entry
 * point from format 11) merged
 * into one series of the process's totals over time, for the reports that show it (text,
 * JSON, HTML). Reads the model only; never prints. */
#ifndef MF_TIMELINE_H
#define MF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* the counts a timeline spreads (struct mf_timeline_point's spread) */
/* what is spread: calls, bytes, temporaries, then calls by enum mf_entry */
enum {
	MF_SPREAD_CALLS,
	MF_SPREAD_BYTES,
	MF_SPREAD_TEMPORARIES,
	MF_SPREAD_ENTRY,
	MF_SPREAD = MF_SPREAD_ENTRY + MF_ENTRY_COUNT
};

/* The process's totals at one moment: what its threads had done by then, each as its last
 * record before then said (scaled by its sampling rate). */
struct mf_timeline_point {
	uint64_t time_ns; /* CLOCK_REALTIME */
	uint64_t calls;	  /* calls seen (recorded or not, as the threads' files count them) */
	uint64_t bytes;	  /* requested */
	uint64_t temporaries;
	/* (lifetimes) the process's live bytes (its one sum, as a thread's last look read it),
	 * and its live blocks as each thread's last whole record counted them: known where a
	 * whole record or an end is (blocks_known), not at a look before a pause */
	uint64_t live_bytes, live_blocks;
	int blocks_known;
	/* (format 11, mf_timeline.by_entry) calls and requested bytes by enum mf_entry: exact
	 * where its threads' last records are whole; at a look before a pause (a record of calls
	 * only) the change between the whole records around it shared out by calls */
	struct mf_timeline_entry by_entry[MF_ENTRY_COUNT];
	/* calls, bytes, temporaries and calls by entry point (MF_SPREAD_*) with each thread's
	 * between two of its records spread evenly over the span (a rate constant between
	 * records; not over a pause a look marked, whose counts come at its end): between two
	 * points the process's go linearly from one's spread to the next's spread_before (what
	 * they were just before that moment, before its steps), mf_timeline_spread_at */
	uint64_t spread[MF_SPREAD], spread_before[MF_SPREAD];
};

struct mf_timeline {
	struct mf_timeline_point *points; /* in time order, the first the process's start (all
					     zeros), the last its threads' ends */
	size_t count;
	uint64_t interval_ns; /* the least interval its threads recorded at (at the end) */
	uint64_t span_ns;     /* the widest, of the threads that made 1% of its calls or more:
				 how fine its calls' rate is known (a bar or row no finer) */
	int kept;     /* some thread of it kept a timeline (format 9, MALLOC_FREQ_TIMELINE) */
	int unended;  /* some thread has no end (killed, running): its calls after its last
			 look at the clock are put at the process's last known moment */
	int live;     /* it has lifetimes: live_* hold */
	int by_entry; /* every thread of it that kept a timeline has by_entry (format 11) */
};

/* Process `process`'s timeline into *out (points malloc'd: mf_timeline_free). 0 or -ENOMEM. */
int mf_timeline_build(const struct mf_model *m, uint32_t process, struct mf_timeline *out);
void mf_timeline_free(struct mf_timeline *t);
/* The point in effect at time_ns: the last at or before it (the first when none). */
const struct mf_timeline_point *mf_timeline_at(const struct mf_timeline *t, uint64_t time_ns);
/* The process's calls, bytes and temporaries by time_ns, each thread's spread over its
 * records' spans (spread), into v: linear between the points around it, the last point's
 * after it. */
void mf_timeline_spread_at(const struct mf_timeline *t, uint64_t time_ns, uint64_t v[MF_SPREAD]);

#endif
