/* The timeline: each thread's running totals over time (by entry point too), written into the
 * header of its own file (malloc_freq_format.h, version 11) at a look at the coarse clock every
 * MF_TIMELINE_STEP calls. Runs inside malloc, in the thread that owns the file: no malloc, no
 * stdio, no lock, errno preserved; never writes another thread's file; never touches a page of
 * the header past the first before it has reserved it on disk. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "life/life.h"
#include "mf_internal.h"

static uint64_t mf_timeline_now(void)
{
	struct timespec ts;
	int saved = errno;
	if (clock_gettime(CLOCK_REALTIME_COARSE, &ts))
		ts.tv_sec = ts.tv_nsec = 0;
	errno = saved;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct mf_timeline_record *mf_timeline_records(struct mf_prof_header *h)
{
	return (struct mf_timeline_record *)((char *)h + MF_TIMELINE_OFFSET);
}

static void mf_timeline_sum(uint64_t *to, uint64_t v)
{
	if (__builtin_add_overflow(*to, v, to))
		*to = UINT64_MAX;
}

/* The thread's totals now, from its leaves (a pass over its nodes, stepping over records). */
static void mf_timeline_totals(const struct mf_prof_header *h, const struct mf_node *nodes,
			       unsigned leaf_slots, struct mf_timeline_record *r)
{
	uint64_t n = h->node_count;
	int life = (h->records & MF_RECORD_LIFE) != 0;
	for (uint64_t i = 1; i < n; i++) {
		const struct mf_node *x = &nodes[i];
		if (x->module == MF_MODULE_SIZES) {
			i += MF_SIZES_SLOTS;
			continue;
		}
		if (x->module != MF_MODULE_ENTRY)
			continue;
		mf_timeline_sum(&r->bytes, x->bytes);
		if (x->rel_pc < MF_ENTRY_COUNT) {
			r->by_entry[x->rel_pc].calls += x->calls;
			mf_timeline_sum(&r->by_entry[x->rel_pc].bytes, x->bytes);
		}
		mf_timeline_sum(&r->temporaries, ((const struct mf_leaf *)(x + 1))->temporaries);
		if (life) {
			const struct mf_life *l = (const struct mf_life *)(x + 1 + MF_LEAF_SLOTS);
			uint64_t frees = __atomic_load_n(&l->frees, __ATOMIC_RELAXED);
			uint64_t freed = __atomic_load_n(&l->freed_bytes, __ATOMIC_RELAXED);
			r->live_blocks += l->blocks > frees ? l->blocks - frees : 0;
			r->live_bytes += l->bytes > freed ? l->bytes - freed : 0;
		}
		i += leaf_slots;
	}
}

/* The records the header's first page holds: all the room there is while the pages after it
 * are not reserved on disk (the file would be a hole there: a write to it faults when the
 * disk is full). */
#define MF_TIMELINE_FIRST_PAGE                                                                     \
	((MF_PAGE_SIZE - MF_TIMELINE_OFFSET) / sizeof(struct mf_timeline_record))

/* Appends r, making room first: every other record goes (the later of each pair stays) and
 * the interval doubles. Past the first page the room is the header's other pages only once
 * they are reserved (mf_timeline_wants_room: the file's thread reserves them before the look
 * that may need them); else what the first page holds. */
static void mf_timeline_append(struct mf_prof_file *f, const struct mf_timeline_record *r)
{
	struct mf_prof_header *h = f->header;
	struct mf_timeline_record *rec = mf_timeline_records(h);
	uint32_t n = h->timeline_count;
	if (n >= MF_TIMELINE_FIRST_PAGE && f->header_whole <= 0)
		h->timeline_records = MF_TIMELINE_FIRST_PAGE;
	if (n >= h->timeline_records) {
		for (uint32_t i = 0; i < n / 2; i++)
			rec[i] = rec[2 * i + 1];
		n /= 2;
		h->timeline_interval_ns *= 2;
		__atomic_store_n(&h->timeline_count, n, __ATOMIC_RELEASE);
	}
	rec[n] = *r;
	__atomic_store_n(&h->timeline_count, n + 1, __ATOMIC_RELEASE);
}

int mf_timeline_wants_room(const struct mf_prof_file *f)
{
	/* (a look appends at most two records: a look before a pause, and its own) */
	const struct mf_prof_header *h = f->header;
	return !f->header_whole && h->timeline_count + 2 > MF_TIMELINE_FIRST_PAGE &&
	       h->timeline_count < h->timeline_records;
}

void mf_timeline_look(struct mf_prof_file *f, unsigned leaf_slots)
{
	struct mf_prof_header *h = f->header;
	if (!h->timeline_records)
		return;
	uint64_t now = mf_timeline_now();
	uint64_t live = h->records & MF_RECORD_LIFE ? mf_life_live_now() : 0;
	uint32_t n = h->timeline_count;
	const struct mf_timeline_record *prev = n ? &mf_timeline_records(h)[n - 1] : NULL;
	uint64_t last = prev ? prev->time_ns : 0;
	uint64_t interval = h->timeline_interval_ns;
	if (now >= (n ? last : h->start_ns) + interval) {
		uint64_t seen = h->timeline_checked_ns;
		/* (idle since its last look, if it had one: that is when the calls since the last
		 * record came) */
		if (seen && seen >= last && now - seen >= interval &&
		    (!prev || h->timeline_checked_calls > prev->calls))
			mf_timeline_append(f, &(struct mf_timeline_record){
						  .time_ns = seen,
						  .calls = h->timeline_checked_calls,
						  .flags = MF_TIMELINE_CALLS_ONLY,
						  .process_live = h->timeline_checked_live});
		struct mf_timeline_record r = {
		    .time_ns = now, .calls = h->calls_total, .process_live = live};
		mf_timeline_totals(h, f->nodes, leaf_slots, &r);
		mf_timeline_append(f, &r);
	}
	h->timeline_checked_calls = h->calls_total;
	h->timeline_checked_live = live;
	__atomic_store_n(&h->timeline_checked_ns, now, __ATOMIC_RELEASE);
}
