/* The summary every text report starts with: totals, calls by entry point, and what the
 * profile lacks or how to read it (sampled estimates, processes still running or ended
 * without finalizing, calls lost or not attributed, code no object maps, sums too large). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"
#include "text.h"

/* The processes whose end is `end` (and, unless raw is -1, whose raw_exit is raw) and that
 * have files not finalized: "1234 (sh), 1240 (cc1)" (five at most), and how many files.
 * Returns how many processes. */
static size_t mf_unfinished(const struct mf_model *m, int end, int raw, char *list, size_t size,
			    size_t *files)
{
	size_t *open = calloc(m->nprocesses ? m->nprocesses : 1, sizeof(*open));
	size_t procs = 0, at = 0;
	*files = 0;
	list[0] = 0;
	if (!open)
		return 0;
	for (size_t i = 0; i < m->nthreads; i++)
		open[m->threads[i].process] += !m->threads[i].complete;
	for (size_t p = 0; p < m->nprocesses; p++) {
		if (!open[p] || m->processes[p].end != end ||
		    (raw >= 0 && m->processes[p].raw_exit != raw))
			continue;
		*files += open[p];
		if (procs++ < 5 && at < size) {
			char name[128], how[64] = "";
			mf_text_escape(m->processes[p].name, name, sizeof(name));
			if (end == MF_END_SIGNAL) {
				how[0] = ',', how[1] = ' ';
				mf_process_end_text(&m->processes[p], how + 2, sizeof(how) - 2);
			} else if (end == MF_END_UNRECORDED && m->processes[p].status_known) {
				snprintf(how, sizeof(how), ", then its pid exited %d",
					 m->processes[p].status);
			}
			at +=
			    (size_t)snprintf(list + at, size - at, "%s%" PRIu64 " (%s%s)",
					     procs > 1 ? ", " : "", m->processes[p].pid, name, how);
		} else if (procs == 6 && at < size) {
			at += (size_t)snprintf(list + at, size - at, ", ...");
		}
	}
	free(open);
	return procs;
}

/* Files not finalized, by how their process ended; none for an _exit, an exec or an exit
 * (their threads' files stay open by design, everything recorded is there). */
static void mf_summary_unfinished(FILE *out, const struct mf_model *m)
{
	static const struct {
		int end, raw; /* raw: of programs whose runtime exits past exit() (-1: any) */
		const char *what;
	} ends[] = {
	    {MF_END_RUNNING, -1, "still running: the counts are those at the time of reading"},
	    {MF_END_SIGNAL, -1, "everything recorded until then is included"},
	    {MF_END_UNRECORDED, 0,
	     "ended without saying how (killed with no profiled parent to see it, crashed, or "
	     "exec'd into a program not profiled); everything recorded until then is included"},
	    {MF_END_UNRECORDED, 1,
	     "ended without saying how: a Go program ends by a system call of its own, which only "
	     "a profiled parent's wait sees (run it under malloc_freq to know how it ended); "
	     "everything recorded until then is included"},
	    {MF_END_UNKNOWN, -1,
	     "profiled by a malloc_freq that kept no process record (killed, crashed, exec'd or "
	     "called _exit while their threads ran); everything recorded until then is "
	     "included"},
	};
	char list[512];
	size_t files;
	for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++) {
		size_t procs =
		    mf_unfinished(m, ends[k].end, ends[k].raw, list, sizeof(list), &files);
		if (procs)
			fprintf(out, "  %zu file%s not finalized, of process%s %s: %s\n", files,
				files == 1 ? "" : "s", procs == 1 ? "" : "es", list, ends[k].what);
	}
}

/* Calls whose stacks pass through code no loaded object maps ([jit] frames). */
static void mf_summary_jit(FILE *out, const struct mf_model *m, uint64_t calls)
{
	size_t addresses = 0;
	for (size_t f = 0; f < m->nframes; f++)
		addresses += m->frames[f].kind == MF_FRAME_JIT;
	if (!addresses)
		return;
	uint64_t through = 0;
	int flag = 0;
	for (size_t i = 0; i < m->nsamples; i++) {
		const struct mf_stack *s = &m->stacks[m->samples[i].stack];
		const uint32_t *fr = mf_model_stack_frames(m, m->samples[i].stack);
		for (uint32_t k = 0; k < s->depth; k++)
			if (m->frames[fr[k]].kind == MF_FRAME_JIT) {
				through = mf_sat_add(through, m->values[MF_METRIC_CALLS][i], &flag);
				break;
			}
	}
	fprintf(out,
		"  %" PRIu64 " calls (%.1f%%) came through code that no loaded object maps "
		"(JIT-compiled or generated code, at %zu addresses): its frames show as [jit]\n",
		through, mf_text_pct(through, calls), addresses);
}

/* The calls that are not in the stacks: lost, not recorded, made while recording was off,
 * nested in the profiler. */
static void mf_summary_uncounted(FILE *out, const struct mf_model *m, uint64_t calls)
{
	uint64_t lost = 0, nested = 0, seen = 0, off = 0;
	int flag = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		off = mf_sat_add(off, m->threads[i].off, &flag);
		lost = mf_sat_add(lost, m->threads[i].lost, &flag);
		nested = mf_sat_add(nested, m->threads[i].nested, &flag);
		seen = mf_sat_add(seen, m->threads[i].seen, &flag);
	}
	if (lost)
		fprintf(out,
			"  %" PRIu64 " of %" PRIu64
			" calls lost: a profile file could not grow (disk full, a file "
			"size limit, or with lifetimes the address space it reserved); the rest "
			"are in the report\n",
			lost, seen);
	uint64_t unrec = 0, unrec_bytes = 0;
	for (size_t i = 0; i < m->nprocesses; i++) {
		unrec = mf_sat_add(unrec, m->processes[i].unrecorded_calls, &flag);
		unrec_bytes = mf_sat_add(unrec_bytes, m->processes[i].unrecorded_bytes, &flag);
	}
	if (unrec) {
		char ub[32];
		mf_text_bytes(ub, sizeof(ub), unrec_bytes);
		fprintf(out,
			"  %" PRIu64 " of %" PRIu64
			" calls (%s requested) were not recorded: threads "
			"that could not get a file (see what the profiler said on the program's "
			"stderr); the rest are in the report\n",
			unrec, mf_sat_add(calls, unrec, &flag), ub);
	}
	if (off)
		fprintf(
		    out,
		    "  %s%" PRIu64 " call%s made while recording was off (MALLOC_FREQ_START=off, "
		    "malloc_freq_disable, MALLOC_FREQ_TOGGLE_SIGNAL, malloc_freq_thread_disable): "
		    "counted, not recorded\n",
		    m->estimated ? "~" : "", off, off == 1 ? " was" : "s were");
	if (nested)
		fprintf(out,
			"  %" PRIu64 " calls arrived while the profiler was recording in the same "
			"thread (signal handlers): counted, not attributed to a stack\n",
			nested);
}

/* With lifetimes, the peak of live bytes: one figure, the at-peak column's total (each
 * process's own peak, summed: what --json's totals say too). In a window the stacks' columns
 * are differences of two states, so the peak said is the run's, and said to be; unless the
 * run's peak came within the window, when the column holds it whole. */
static void mf_summary_peak(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	const struct mf_process *top = NULL; /* (the one process with a peak; NULL: several) */
	size_t peaks = 0;
	int flag = 0;
	uint64_t rate = mf_model_rate(m), run = 0;
	for (size_t i = 0; i < m->nprocesses; i++) {
		const struct mf_process *p = &m->processes[i];
		if (!p->peak_bytes)
			continue;
		peaks++;
		top = p;
		run = mf_sat_add(
		    run, mf_sat_mul(p->peak_bytes, p->sample_rate ? p->sample_rate : 1, &flag),
		    &flag);
	}
	char pb[32], when[64] = "", est[2] = {rate > 1 ? '~' : 0, 0};
	if (peaks == 1 && top->peak_ns && top->start_ns && top->peak_ns >= top->start_ns)
		snprintf(when, sizeof(when), ", %.3f s after its start%s%s",
			 (double)(top->peak_ns - top->start_ns) / 1e9,
			 m->nprocesses > 1 ? ", of " : "", m->nprocesses > 1 ? top->name : "");
	else if (peaks == 1)
		snprintf(when, sizeof(when), ", at its end%s%s", m->nprocesses > 1 ? ", of " : "",
			 m->nprocesses > 1 ? top->name : "");
	uint64_t bytes = mf_model_total(m, MF_METRIC_PEAK, NULL);
	uint64_t blocks = mf_model_total(m, MF_METRIC_PEAK_BLOCKS, NULL);
	/* (a peak reached after the window's start: the column holds that peak, as the run's) */
	int inside = bytes == run && blocks;
	if (o->window && o->window[0] && !inside) { /* (sampled: the sampled peak, scaled) */
		if (!run)
			return;
		mf_text_bytes(pb, sizeof(pb), run);
		fprintf(out,
			"  peak of the whole run, not of these counts (a snapshot keeps no peak of "
			"its own): %s%s live%s%s\n",
			est, pb, when, peaks > 1 ? ", each process's own summed" : "");
		return;
	}
	if (!bytes && !blocks)
		return;
	mf_text_bytes(pb, sizeof(pb), bytes);
	fprintf(out, "  peak: %s%s live in %s%" PRIu64 " blocks%s (the at-peak column: %s)\n", est,
		pb, est, blocks, peaks > 1 ? ", each process's own peak summed" : when,
		peaks > 1 ? "what each stack held at its process's peak"
			  : "what each stack held then");
	if (rate > 1)
		fprintf(out,
			"  (sampled: the sampled blocks' most live bytes, times %" PRIu64
			", and what each stack held then, scaled alike; it runs high when live "
			"bytes stay near their peak for long)\n",
			rate);
}

/* With lifetimes: the leaked blocks, the short-lived (--short-lived) and the peak. */
static void mf_summary_lifetimes(FILE *out, const struct mf_model *m,
				 const struct mf_report_options *o, uint64_t calls)
{
	int flag = 0;
	uint64_t blocks = mf_model_total(m, MF_METRIC_LEAKED_BLOCKS, NULL), unknown = 0;
	char lb[32], uf[80] = "frees of blocks never seen allocated are not known under "
			      "sampling";
	mf_text_bytes(lb, sizeof(lb), mf_model_total(m, MF_METRIC_LEAKED, NULL));
	for (size_t i = 0; i < m->nprocesses; i++)
		unknown = mf_sat_add(unknown, m->processes[i].unknown_frees, &flag);
	if (!m->estimated)
		snprintf(uf, sizeof(uf), "%" PRIu64 " %s never seen allocated", unknown,
			 unknown == 1 ? "free of a block" : "frees of blocks");
	fprintf(out,
		"  lifetimes: %s%" PRIu64 " block%s (%s%s) not freed at the end (leaked, or live "
		"when a process was killed); %s\n",
		m->estimated ? "~" : "", blocks, blocks == 1 ? "" : "s", m->estimated ? "~" : "",
		lb, uf);
	if (mf_model_holds(m, MF_METRIC_SHORT)) {
		uint64_t n = mf_model_total(m, MF_METRIC_SHORT, NULL);
		char under[24];
		mf_text_ns(under, sizeof(under), (double)(1ull << (m->short_buckets - 1)));
		fprintf(out,
			"  short-lived: %s%" PRIu64 " of the calls (%.1f%%) had their block "
			"freed within %s (--short-lived %s, rounded to a power of two ns: "
			"lifetimes under 2^%u ns)\n",
			m->estimated ? "~" : "", n, mf_text_pct(n, calls), under,
			o->short_lived ? o->short_lived : "", m->short_buckets - 1);
	}
	mf_summary_peak(out, m, o);
	if (mf_model_holds(m, MF_METRIC_LIFETIME)) {
		uint64_t freed = mf_model_total(m, MF_METRIC_FREED, NULL);
		uint64_t ns = mf_model_total(m, MF_METRIC_LIFETIME, NULL);
		char mean[32] = "-";
		if (freed)
			mf_text_ns(mean, sizeof(mean), (double)ns / (double)freed);
		fprintf(out,
			"  mean lifetime: %s, of the %s%" PRIu64 " blocks freed at a known time "
			"(allocation to free)\n",
			mean, m->estimated ? "~" : "", freed);
	} else if (m->life_old) {
		fprintf(out,
			"  %zu thread file%s of format 7 or older: %s no most-live counts nor "
			"lifetime sums, so the max live and mean life columns are left out\n",
			m->life_old, m->life_old == 1 ? "" : "s",
			m->life_old == 1 ? "its lifetimes record" : "their lifetimes record");
	}
}

/* The run's duration, first allocation to last end, and the calls per second over it. */
static void mf_summary_duration(FILE *out, const struct mf_model *m,
				const struct mf_report_options *o, uint64_t calls)
{
	uint64_t start, end;
	int known = mf_model_span(m, &start, &end);
	if (!known || end <= start) {
		fprintf(out, "  duration not known: %s\n",
			m->nprocesses && known ? "no time passed between start and end"
			: m->nprocesses	       ? "some process has no start or no end recorded "
						 "(still running, killed, or an older format)"
					       : "no process record");
		return;
	}
	double s = (double)(end - start) / 1e9;
	int digits = 3; /* (at least four significant digits) */
	for (double x = s; x < 1.0 && digits < 9; x *= 10)
		digits++;
	if (o->window && o->window[0]) {
		fprintf(out,
			"  the run took %.*f s, first allocation to end (the counts are a "
			"window's: no rate)\n",
			digits, s);
		return;
	}
	fprintf(out, "  duration: %.*f s, first allocation to end; %s%.1f calls/s\n", digits, s,
		m->estimated ? "~" : "", (double)calls / s);
}

int mf_report_summary(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	uint64_t entry[MF_ENTRY_COUNT];
	uint64_t calls = mf_model_total(m, MF_METRIC_CALLS, entry);
	uint64_t bytes = mf_model_total(m, MF_METRIC_BYTES, NULL);
	char b[32], procs[64] = "";
	mf_text_bytes(b, sizeof(b), bytes);
	if (m->nprocesses > 1)
		snprintf(procs, sizeof(procs), " of %zu processes", m->nprocesses);
	fprintf(out,
		"malloc_freq: %s%" PRIu64 "%s calls, %s%s requested; %zu thread%s%s in %zu file%s "
		"from %zu director%s\n",
		m->estimated ? "~" : "", calls, calls == UINT64_MAX ? "+" : "",
		bytes == UINT64_MAX ? "at least " : "", b + (bytes == UINT64_MAX ? 2 : 0),
		m->nthreads, m->nthreads == 1 ? "" : "s", procs, o->files, o->files == 1 ? "" : "s",
		o->dirs, o->dirs == 1 ? "y" : "ies");
	if (o->window && o->window[0])
		fprintf(out, "  counts %s\n", o->window);
	fprintf(out, "  by function:");
	const char *sep = " ";
	for (int e = 0; e < MF_ENTRY_COUNT; e++) {
		if (!entry[e])
			continue;
		fprintf(out, "%s%s %s%" PRIu64 " (%.1f%%)", sep, mf_entry_names[e],
			m->estimated ? "~" : "", entry[e], mf_text_pct(entry[e], calls));
		sep = ", ";
	}
	fprintf(out, "%s\n", calls ? "" : " no calls recorded");
	mf_summary_duration(out, m, o, calls);
	if (m->estimated)
		fprintf(out,
			"  estimates: some files were sampled (MALLOC_FREQ_SAMPLE); their counts "
			"are scaled by the sampling rate\n");
	if (mf_model_saturated(m, MF_METRIC_BYTES, bytes) ||
	    mf_model_saturated(m, MF_METRIC_CALLS, calls))
		fprintf(out, "  some sums reached 2^64 - 1 (16 EiB of requests, say) and stopped "
			     "there: they are at least what they show\n");
	mf_summary_unfinished(out, m);
	mf_summary_uncounted(out, m, calls);
	if (m->weighted) {
		uint64_t ns = mf_model_total(m, MF_METRIC_TIME, NULL);
		fprintf(out,
			"  %.3f s of thread CPU time came before these calls "
			"(MALLOC_FREQ_WEIGHT=time), each stack charged with the time since its "
			"thread's previous recorded call\n",
			(double)ns / 1e9);
	}
	mf_summary_jit(out, m, calls);
	if (m->has_leaf_records) {
		uint64_t temporaries = mf_model_total(m, MF_METRIC_TEMPORARY, NULL);
		fprintf(out,
			"  temporaries: %s%" PRIu64 " of the calls (%.1f%%) had their block freed "
			"before their thread's next allocation\n",
			m->estimated ? "~" : "", temporaries, mf_text_pct(temporaries, calls));
	}
	if (m->has_lifetimes)
		mf_summary_lifetimes(out, m, o, calls);
	return ferror(out) ? -EIO : 0;
}
