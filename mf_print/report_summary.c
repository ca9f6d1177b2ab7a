/* The summary every text report starts with: totals, calls by entry point, and what the
 * profile lacks (sampled estimates, files not finalized, calls lost or not attributed). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>

#include "report.h"
#include "text.h"

int mf_report_summary(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	uint64_t entry[MF_ENTRY_COUNT];
	uint64_t calls = mf_model_total(m, MF_METRIC_CALLS, entry);
	uint64_t bytes = mf_model_total(m, MF_METRIC_BYTES, NULL);
	uint64_t lost = 0, nested = 0, seen = 0;
	size_t incomplete = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		lost += m->threads[i].lost;
		nested += m->threads[i].nested;
		seen += m->threads[i].seen;
		incomplete += !m->threads[i].complete;
	}
	char b[32];
	mf_text_bytes(b, sizeof(b), bytes);
	fprintf(out,
		"malloc_freq: %s%" PRIu64
		" calls, %s requested; %zu thread%s in %zu file%s from %zu director%s\n",
		m->estimated ? "~" : "", calls, b, m->nthreads, m->nthreads == 1 ? "" : "s",
		o->files, o->files == 1 ? "" : "s", o->dirs, o->dirs == 1 ? "y" : "ies");
	fprintf(out, "  by function:");
	const char *sep = " ";
	for (int e = 0; e < MF_ENTRY_COUNT; e++) {
		if (!entry[e])
			continue;
		fprintf(out, "%s%s %" PRIu64 " (%.1f%%)", sep, mf_entry_names[e], entry[e],
			mf_text_pct(entry[e], calls));
		sep = ", ";
	}
	fprintf(out, "%s\n", calls ? "" : " no calls recorded");
	if (m->estimated)
		fprintf(out,
			"  estimates: some files were sampled (MALLOC_FREQ_SAMPLE); their counts "
			"are scaled by the sampling rate\n");
	if (incomplete)
		fprintf(out,
			"  %zu file%s not finalized: the process was killed, crashed, exec'd or "
			"called _exit while %s ran; everything recorded until then is included\n",
			incomplete, incomplete == 1 ? "" : "s",
			incomplete == 1 ? "its thread" : "their threads");
	if (lost)
		fprintf(out,
			"  %" PRIu64 " of %" PRIu64
			" calls lost: a profile file could not grow (disk "
			"full, or a file size limit); the rest are in the report\n",
			lost, seen);
	if (nested)
		fprintf(out,
			"  %" PRIu64 " calls arrived while the profiler was recording in the same "
			"thread (signal handlers): counted, not attributed to a stack\n",
			nested);
	return ferror(out) ? -EIO : 0;
}
