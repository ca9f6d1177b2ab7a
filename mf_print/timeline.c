/* A process's timeline from its threads' records: each thread's records, bracketed by its
 * start (zeros) and its end (its file's totals), become events; sorted by time, each moves the
 * process's sums by what it adds to its thread's last. Reads the model; never prints. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

struct mf_event {
	uint32_t thread;
	uint32_t seq;	/* its place among all: a thread's events keep their order at equal times */
	int calls_only; /* its other figures are interpolated */
	int final;	/* the thread's end: its file's totals */
	int has_live;	/* plive holds the process's live bytes then (lifetimes) */
	uint64_t plive;
	double slope[MF_SPREAD]; /* its thread's calls (...) per ns to its next event (spread) */
	struct mf_timeline_point p;
};

static int mf_event_cmp(const void *a, const void *b)
{
	const struct mf_event *x = a, *y = b;
	if (x->p.time_ns != y->p.time_ns)
		return x->p.time_ns < y->p.time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t mf_spread_of(const struct mf_timeline_point *p, int j)
{
	return j == MF_SPREAD_CALLS	    ? p->calls
	       : j == MF_SPREAD_BYTES	    ? p->bytes
	       : j == MF_SPREAD_TEMPORARIES ? p->temporaries
					    : p->by_entry[j - MF_SPREAD_ENTRY].calls;
}

static uint64_t mf_scale(uint64_t v, uint64_t rate)
{
	uint64_t r;
	return __builtin_mul_overflow(v, rate, &r) ? UINT64_MAX : r;
}

static void mf_add(uint64_t *to, uint64_t v)
{
	if (__builtin_add_overflow(*to, v, to))
		*to = UINT64_MAX;
}

/* A thread's final totals, from its samples. */
static void mf_thread_final(const struct mf_model *m, uint32_t thread, struct mf_timeline_point *p)
{
	for (size_t s = 0; s < m->nsamples; s++) {
		if (m->samples[s].thread != thread)
			continue;
		struct mf_timeline_entry *e = &p->by_entry[m->stacks[m->samples[s].stack].entry];
		mf_add(&e->calls, m->values[MF_METRIC_CALLS][s]);
		mf_add(&e->bytes, m->values[MF_METRIC_BYTES][s]);
		p->bytes += m->values[MF_METRIC_BYTES][s];
		p->temporaries += m->values[MF_METRIC_TEMPORARY][s];
		p->live_bytes += m->values[MF_METRIC_LEAKED][s];
		p->live_blocks += m->values[MF_METRIC_LEAKED_BLOCKS][s];
	}
	p->calls = m->threads[thread].seen;
}

/* a + f (b - a), for b >= a */
static uint64_t mf_between(uint64_t a, uint64_t b, double f)
{
	return b > a ? a + (uint64_t)(f * (double)(b - a) + 0.5) : a;
}

/* By entry point, the change from a to b shared out by f: the entry points' running sums
 * rounded, so that the shares add up to the whole's share (and are exact where one entry point
 * changed alone). */
static void mf_interpolate_entries(struct mf_timeline_entry *p, const struct mf_timeline_entry *a,
				   const struct mf_timeline_entry *b, double f)
{
	uint64_t from[2] = {0, 0}, to[2] = {0, 0}, was[2] = {0, 0};
	for (int e = 0; e < MF_ENTRY_COUNT; e++) {
		from[0] += a[e].calls, from[1] += a[e].bytes;
		to[0] += b[e].calls > a[e].calls ? b[e].calls : a[e].calls;
		to[1] += b[e].bytes > a[e].bytes ? b[e].bytes : a[e].bytes;
		uint64_t now[2] = {mf_between(from[0], to[0], f), mf_between(from[1], to[1], f)};
		p[e].calls = now[0] - was[0];
		p[e].bytes = now[1] - was[1];
		was[0] = now[0], was[1] = now[1];
	}
}

/* The figures of calls-only events between two whole ones, by their calls. */
static void mf_interpolate(struct mf_event *e, size_t from, size_t to)
{
	const struct mf_timeline_point *a = &e[from].p, *b = &e[to].p;
	for (size_t i = from + 1; i < to; i++) {
		struct mf_timeline_point *p = &e[i].p;
		double f = b->calls > a->calls
			       ? (double)(p->calls - a->calls) / (double)(b->calls - a->calls)
			       : 0;
		mf_interpolate_entries(p->by_entry, a->by_entry, b->by_entry, f);
		p->bytes = mf_between(a->bytes, b->bytes, f);
		p->temporaries = mf_between(a->temporaries, b->temporaries, f);
		p->live_bytes = a->live_bytes; /* (live is not monotonic: the last known) */
		p->live_blocks = a->live_blocks;
	}
}

/* Thread k's events, appended to *e: start, records, last look, end (at `end` when its file
 * has none). */
static int mf_thread_events(const struct mf_model *m, uint32_t k, uint64_t end, struct mf_event **e,
			    size_t *n, size_t *cap)
{
	const struct mf_thread *t = &m->threads[k];
	int live = m->has_lifetimes;
	size_t first = *n, need = *n + t->nrecords + 3;
	if (need > *cap) {
		size_t c = need * 2;
		struct mf_event *v = realloc(*e, c * sizeof(*v));
		if (!v)
			return -ENOMEM;
		*e = v;
		*cap = c;
	}
	struct mf_event *v = *e;
	uint64_t from = t->start_ns > t->timeline_from_ns ? t->start_ns : t->timeline_from_ns;
	v[(*n)++] = (struct mf_event){.thread = k, .p = {.time_ns = from}};
	for (uint32_t i = 0; i < t->nrecords; i++) {
		const struct mf_timeline_record *r = &t->records[i];
		struct mf_event *x = &v[(*n)++];
		*x = (struct mf_event){
		    .thread = k,
		    .calls_only = (r->flags & MF_TIMELINE_CALLS_ONLY) != 0,
		    .p = {.time_ns = r->time_ns,
			  .calls = r->calls,
			  .bytes = mf_scale(r->bytes, t->sample_rate),
			  .temporaries = mf_scale(r->temporaries, t->sample_rate),
			  .live_bytes = mf_scale(r->live_bytes, t->sample_rate),
			  .live_blocks = mf_scale(r->live_blocks, t->sample_rate)},
		    .has_live = live,
		    .plive = mf_scale(r->process_live, t->sample_rate)};
		for (int j = 0; j < MF_ENTRY_COUNT; j++) {
			x->p.by_entry[j].calls = mf_scale(r->by_entry[j].calls, t->sample_rate);
			x->p.by_entry[j].bytes = mf_scale(r->by_entry[j].bytes, t->sample_rate);
		}
	}
	const struct mf_event *last = &v[*n - 1];
	if (t->checked_ns >= last->p.time_ns && t->checked_calls > last->p.calls)
		v[(*n)++] =
		    (struct mf_event){.thread = k,
				      .calls_only = 1,
				      .p = {.time_ns = t->checked_ns, .calls = t->checked_calls},
				      .has_live = live,
				      .plive = mf_scale(t->checked_live, t->sample_rate)};
	struct mf_event *fin = &v[(*n)++];
	*fin = (struct mf_event){
	    .thread = k, .final = 1, .p = {.time_ns = t->end_ns ? t->end_ns : end}};
	mf_thread_final(m, k, &fin->p);
	/* Times never go back, nor calls (the coarse clock may read before the file's start). */
	for (size_t i = first + 1; i < *n; i++) {
		if (v[i].p.time_ns < v[i - 1].p.time_ns)
			v[i].p.time_ns = v[i - 1].p.time_ns;
		if (v[i].p.calls < v[i - 1].p.calls)
			v[i].p.calls = v[i - 1].p.calls;
	}
	for (size_t i = first; i < *n; i++)
		v[i].seq = (uint32_t)i;
	for (size_t i = first, whole = first; i < *n; i++)
		if (!v[i].calls_only) {
			mf_interpolate(v, whole, i);
			whole = i;
		}
	/* (after the looks' other figures are filled in, so that all are spread alike; a span
	 * from a look before a pause, or to the thread's end from its last look, is not spread:
	 * its calls came at its end, or before the end unrecorded) */
	for (size_t i = first; i + 1 < *n; i++)
		for (int j = 0; j < MF_SPREAD; j++)
			if (!v[i].calls_only && v[i + 1].p.time_ns > v[i].p.time_ns &&
			    mf_spread_of(&v[i + 1].p, j) > mf_spread_of(&v[i].p, j))
				v[i].slope[j] = (double)(mf_spread_of(&v[i + 1].p, j) -
							 mf_spread_of(&v[i].p, j)) /
						(double)(v[i + 1].p.time_ns - v[i].p.time_ns);
	return 0;
}

/* The threads' counts spread by now (ns after the first event): the sum of their counts at
 * their last events, plus each one's slope times the time since (rate * now - offset); never
 * less than before (*spread, updated). */
static void mf_spread_now(const struct mf_timeline_point *sum, const double *rate,
			  const double *offset, double now, uint64_t *spread)
{
	for (int j = 0; j < MF_SPREAD; j++) {
		double lin = rate[j] * now - offset[j];
		uint64_t v = mf_spread_of(sum, j) + (lin > 0 ? (uint64_t)(lin + 0.5) : 0);
		spread[j] = v > spread[j] ? v : spread[j];
	}
}

static void mf_point_move(struct mf_timeline_point *sum, const struct mf_timeline_point *from,
			  const struct mf_timeline_point *to)
{
	sum->calls += to->calls - from->calls;
	sum->bytes += to->bytes - from->bytes;
	sum->temporaries += to->temporaries - from->temporaries;
	sum->live_bytes += to->live_bytes - from->live_bytes;
	sum->live_blocks += to->live_blocks - from->live_blocks;
	for (int e = 0; e < MF_ENTRY_COUNT; e++) {
		sum->by_entry[e].calls += to->by_entry[e].calls - from->by_entry[e].calls;
		sum->by_entry[e].bytes += to->by_entry[e].bytes - from->by_entry[e].bytes;
	}
}

int mf_timeline_build(const struct mf_model *m, uint32_t process, struct mf_timeline *out)
{
	memset(out, 0, sizeof(*out));
	const struct mf_process *proc = &m->processes[process];
	out->live = m->has_lifetimes;
	out->by_entry = 1;
	uint64_t end = proc->end_ns, seen = 0;
	uint32_t nthreads = 0, ended = 0;
	for (size_t k = 0; k < m->nthreads; k++)
		if (m->threads[k].process == process)
			seen += m->threads[k].seen;
	for (size_t k = 0; k < m->nthreads; k++) {
		const struct mf_thread *t = &m->threads[k];
		if (t->process != process)
			continue;
		nthreads++;
		out->kept |= t->timeline;
		out->by_entry &= !t->timeline || t->by_entry;
		if (t->timeline && (!out->interval_ns || t->interval_ns < out->interval_ns))
			out->interval_ns = t->interval_ns;
		if (t->timeline && t->interval_ns > out->span_ns && t->seen >= seen / 100)
			out->span_ns = t->interval_ns;
		uint64_t latest = t->end_ns > t->checked_ns ? t->end_ns : t->checked_ns;
		if (t->nrecords && t->records[t->nrecords - 1].time_ns > latest)
			latest = t->records[t->nrecords - 1].time_ns;
		if (!proc->end_ns && latest > end)
			end = latest;
		out->unended |= !t->end_ns;
	}
	struct mf_event *e = NULL;
	size_t n = 0, cap = 0;
	uint32_t *at = calloc(m->nthreads ? m->nthreads : 1, sizeof(*at)); /* the last event + 1 */
	double(*slope)[MF_SPREAD] = calloc(m->nthreads ? m->nthreads : 1, sizeof(*slope));
	if (!at || !slope)
		goto nomem;
	for (size_t k = 0; k < m->nthreads; k++)
		if (m->threads[k].process == process &&
		    mf_thread_events(m, (uint32_t)k, end, &e, &n, &cap))
			goto nomem;
	qsort(e, n, sizeof(*e), mf_event_cmp);
	if (!(out->points = calloc(n + 1, sizeof(*out->points))))
		goto nomem;
	struct mf_timeline_point sum = {0};
	/* The first point is the process's start, with nothing counted: the first records may
	 * lie at the same time (the coarse clock read before the file's start, so moved to it),
	 * and a report counts from this point on. */
	if (n) {
		out->points[out->count] = sum;
		out->points[out->count++].time_ns = e[0].p.time_ns;
	}
	/* (live bytes: the process's own sum as the latest record says it; at the last thread's
	 * end, the threads' leaves' sum, which is then what stayed live) */
	uint64_t live = 0, spread[MF_SPREAD] = {0}, before[MF_SPREAD];
	double rate[MF_SPREAD] = {0}, offset[MF_SPREAD] = {0};
	for (size_t i = 0; i < n; i++) {
		static const struct mf_timeline_point zero;
		uint32_t k = e[i].thread;
		const struct mf_timeline_point *from = at[k] ? &e[at[k] - 1].p : &zero;
		double now = (double)(e[i].p.time_ns - e[0].p.time_ns);
		mf_spread_now(&sum, rate, offset, now, spread);
		memcpy(before, spread, sizeof(before));
		for (int j = 0; j < MF_SPREAD; j++) {
			if (at[k])
				offset[j] -= slope[k][j] * (double)(from->time_ns - e[0].p.time_ns);
			rate[j] += e[i].slope[j] - slope[k][j];
			offset[j] += e[i].slope[j] * now;
			slope[k][j] = e[i].slope[j];
		}
		mf_point_move(&sum, from, &e[i].p);
		at[k] = (uint32_t)i + 1;
		sum.time_ns = e[i].p.time_ns;
		/* (a thread's end gives the threads' leaves' sum, stale for the threads still
		 * running: it is the process's live only once all have ended) */
		ended += e[i].final;
		live = e[i].has_live			 ? e[i].plive
		       : e[i].final && ended == nthreads ? sum.live_bytes
							 : live;
		struct mf_timeline_point x = sum;
		mf_spread_now(&sum, rate, offset, now, spread);
		memcpy(x.spread, spread, sizeof(x.spread));
		memcpy(x.spread_before, before, sizeof(x.spread_before));
		x.live_bytes = live;
		x.blocks_known = !e[i].calls_only;
		if (out->count > 1 && out->points[out->count - 1].time_ns == sum.time_ns) {
			/* (one moment's events: the blocks a whole record counted are still the
			 * moment's only if no look at calls after it added any) */
			const struct mf_timeline_point *was = &out->points[out->count - 1];
			x.blocks_known |= was->blocks_known && was->calls == x.calls;
			memcpy(x.spread_before, was->spread_before, sizeof(x.spread_before));
			out->points[out->count - 1] = x;
		} else {
			out->points[out->count++] = x;
		}
	}
	free(e);
	free(at);
	free(slope);
	return 0;
nomem:
	free(e);
	free(at);
	free(slope);
	mf_timeline_free(out);
	return -ENOMEM;
}

void mf_timeline_free(struct mf_timeline *t)
{
	free(t->points);
	memset(t, 0, sizeof(*t));
}

const struct mf_timeline_point *mf_timeline_at(const struct mf_timeline *t, uint64_t time_ns)
{
	size_t lo = 0, hi = t->count; /* the first point after time_ns */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->points[mid].time_ns <= time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &t->points[lo ? lo - 1 : 0];
}

void mf_timeline_spread_at(const struct mf_timeline *t, uint64_t time_ns, uint64_t v[MF_SPREAD])
{
	const struct mf_timeline_point *a = mf_timeline_at(t, time_ns), *b = a + 1;
	int last = a == &t->points[t->count - 1] || time_ns <= a->time_ns;
	double f = last ? 0 : (double)(time_ns - a->time_ns) / (double)(b->time_ns - a->time_ns);
	for (int j = 0; j < MF_SPREAD; j++)
		v[j] =
		    a->spread[j] +
		    (last ? 0 : (uint64_t)(f * (double)(b->spread_before[j] - a->spread[j]) + 0.5));
}
