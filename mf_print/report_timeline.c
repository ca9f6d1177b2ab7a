/* --timeline: each process's timeline (timeline.h) as a table, a row per interval of time (no
 * finer than its busy threads recorded at): calls and their rate (each thread's spread evenly
 * between its records), requested bytes, temporaries, with lifetimes the bytes and blocks live
 * at the row's end, and (format 11) the calls of the entry points besides malloc that the
 * process used, spread as the calls are: a column each where they fit in 100 columns, else
 * named in each row. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "report.h"
#include "text.h"
#include "timeline.h"

#define MF_TIMELINE_ROWS  40  /* at most, per process: rows widen (doubling) to fit */
#define MF_TIMELINE_WIDTH 100 /* columns of a row, at most, where the entry points are columns */

/* The entry points besides malloc that the process used (by its last point), as bits; and
 * whether a column each fits in the row's width after `used` columns. */
static unsigned mf_entries_used(const struct mf_timeline *t, int used, int *columns)
{
	unsigned bits = 0;
	const struct mf_timeline_point *last = &t->points[t->count - 1];
	for (int e = MF_ENTRY_MALLOC + 1; t->by_entry && e < MF_ENTRY_COUNT; e++)
		if (last->by_entry[e].calls) {
			bits |= 1u << e;
			used += 1 + (int)(strlen(mf_entry_names[e]) > 12 ? strlen(mf_entry_names[e])
									 : 12);
		}
	*columns = used <= MF_TIMELINE_WIDTH;
	return bits;
}

static void mf_seconds(char *buf, size_t size, uint64_t ns)
{
	if (ns < 10000000000ull)
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
	else
		snprintf(buf, size, "%.1f s", (double)ns / 1e9);
}

static int mf_timeline_rows(FILE *out, const struct mf_model *m, uint32_t process,
			    const struct mf_timeline *t)
{
	const struct mf_process *p = &m->processes[process];
	uint64_t start = t->points[0].time_ns, span = t->points[t->count - 1].time_ns - start;
	uint64_t row = t->span_ns ? t->span_ns : 1000000000ull;
	while (span / row >= MF_TIMELINE_ROWS && row <= UINT64_MAX / 2)
		row *= 2;
	char w[32], s[32];
	mf_seconds(w, sizeof(w), row);
	mf_seconds(s, sizeof(s), span);
	fprintf(out, "\n%s (%s, pid %" PRIu64 "): %s, a row per %s%s\n", p->dir, p->name, p->pid, s,
		w, t->unended ? " (a thread ended unrecorded: its last calls are at the end)" : "");
	fprintf(out, "%10s %12s %12s %12s %12s", "time", "calls", "calls/s", "requested",
		"temporaries");
	if (t->live)
		fprintf(out, " %12s %12s", "live", "live blocks");
	int columns;
	unsigned used = mf_entries_used(t, 62 + (t->live ? 26 : 0), &columns);
	for (int e = 0; columns && e < MF_ENTRY_COUNT; e++)
		if (used & 1u << e)
			fprintf(out, " %12s", mf_entry_names[e]);
	if (used && !columns)
		fputs("  calls by entry point besides malloc", out);
	fputc('\n', out);
	uint64_t was[MF_SPREAD] = {0}; /* (spread, by the row's start) */
	/* (offsets from start, each row's end saturated: a file's interval or times near 2^64
	 * give one row, not an endless count past a wrap) */
	for (uint64_t off = row;; off = off <= UINT64_MAX - row ? off + row : UINT64_MAX) {
		/* (the last row ends at the timeline's end, and its rate is of its own width) */
		uint64_t to = off < span ? off : span,
			 width = to > off - row ? to - (off - row) : row;
		uint64_t end = to <= UINT64_MAX - start ? start + to : UINT64_MAX;
		const struct mf_timeline_point *x = mf_timeline_at(t, end);
		uint64_t now[MF_SPREAD];
		mf_timeline_spread_at(t, end, now);
		char at[32], bytes[32], live[32];
		mf_seconds(at, sizeof(at), end - start);
		mf_text_bytes(bytes, sizeof(bytes), now[MF_SPREAD_BYTES] - was[MF_SPREAD_BYTES]);
		mf_text_bytes(live, sizeof(live), x->live_bytes);
		fprintf(out, "%10s %12" PRIu64 " %12.0f %12s %12" PRIu64, at,
			now[MF_SPREAD_CALLS] - was[MF_SPREAD_CALLS],
			(double)(now[MF_SPREAD_CALLS] - was[MF_SPREAD_CALLS]) * 1e9 / (double)width,
			bytes, now[MF_SPREAD_TEMPORARIES] - was[MF_SPREAD_TEMPORARIES]);
		if (t->live && x->blocks_known)
			fprintf(out, " %12s %12" PRIu64, live, x->live_blocks);
		else if (t->live)
			fprintf(out, " %12s %12s", live, "-");
		for (int e = 0; e < MF_ENTRY_COUNT; e++) {
			uint64_t n = now[MF_SPREAD_ENTRY + e] - was[MF_SPREAD_ENTRY + e];
			if (used & 1u << e && columns)
				fprintf(out, " %12" PRIu64, n);
			else if (used & 1u << e && n)
				fprintf(out, " %s %" PRIu64, mf_entry_names[e], n);
		}
		fputc('\n', out);
		memcpy(was, now, sizeof(was));
		if (off >= span || off == UINT64_MAX || end == UINT64_MAX)
			break;
	}
	return 0;
}

int mf_report_timeline(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	(void)o;
	int none = 0;
	if (m->timeline_old)
		fprintf(out, "\n%zu thread file%s of format 8 or older: no timeline\n",
			m->timeline_old, m->timeline_old == 1 ? "" : "s");
	for (uint32_t i = 0; i < m->nprocesses; i++) {
		struct mf_timeline t;
		if (mf_timeline_build(m, i, &t))
			return -ENOMEM;
		if (t.kept && t.count)
			mf_timeline_rows(out, m, i, &t);
		else
			none++;
		mf_timeline_free(&t);
	}
	if (none && !m->timeline_old)
		fprintf(out, "\n%d process%s kept no timeline (MALLOC_FREQ_TIMELINE=off)\n", none,
			none == 1 ? "" : "es");
	return ferror(out) ? -EIO : 0;
}
