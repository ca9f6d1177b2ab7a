/* --json: the whole model as one JSON document for scripts: the summary, the modules, the
 * frame table, the stacks as frame ids, the processes and threads with their totals, and the
 * samples (a stack as one thread recorded it) with every counter. Its schema is
 * MF_JSON_VERSION, described in README.md ("JSON"); a change to it bumps the version. Text
 * is written as valid UTF-8 whatever the profile holds. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "report.h"
#include "timeline.h"

#define MF_JSON_VERSION 2

static const char *const mf_json_kinds[] = {
    [MF_FRAME_CODE] = "code", [MF_FRAME_ENTRY] = "entry", [MF_FRAME_TRUNCATED] = "truncated",
    [MF_FRAME_JIT] = "jit",   [MF_FRAME_TAG] = "tag",
};
_Static_assert(sizeof(mf_json_kinds) / sizeof(*mf_json_kinds) == MF_FRAME_TAG + 1,
	       "a name for every frame kind");

static const char *const mf_json_ends[] = {
    [MF_END_UNKNOWN] = "unknown",
    [MF_END_RUNNING] = "running",
    [MF_END_UNRECORDED] = "unrecorded",
    [MF_END_EXIT] = "exit",
    [MF_END_QUICK_EXIT] = "_exit",
    [MF_END_SIGNAL] = "signal",
    [MF_END_EXEC] = "exec",
    [MF_END_DETACHED] = "detached",
};

/* The length of the well-formed UTF-8 character at s (RFC 3629: no overlong form, no
 * surrogate, nothing past U+10FFFF), or 0. */
static size_t mf_json_utf8(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* s as a JSON string; NULL as null. A byte that is not UTF-8 becomes U+FFFD. */
static void mf_json_str(FILE *out, const char *str)
{
	if (!str) {
		fputs("null", out);
		return;
	}
	const unsigned char *s = (const unsigned char *)str;
	putc('"', out);
	while (*s) {
		size_t n;
		if (*s == '"' || *s == '\\') {
			putc('\\', out);
			putc(*s++, out);
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(out, "\\u%04x", *s++);
		} else if (*s < 0x80) {
			putc(*s++, out);
		} else if ((n = mf_json_utf8(s))) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fputs("\\ufffd", out);
			s++;
		}
	}
	putc('"', out);
}

/* The metrics written: those the model holds (set by mf_report_json). */
static int mf_json_held[MF_METRICS], mf_json_nheld;

/* "name": {"calls": N, "bytes": N, ...}: one value per metric held. */
static void mf_json_values(FILE *out, const char *name, const uint64_t *v)
{
	fprintf(out, "\"%s\": {", name);
	for (int k = 0; k < mf_json_nheld; k++)
		fprintf(out, "%s\"%s\": %" PRIu64, k ? ", " : "",
			mf_metric_info[mf_json_held[k]].name, v[mf_json_held[k]]);
	putc('}', out);
}

static void mf_json_summary(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	uint64_t total[MF_METRICS], entry[MF_ENTRY_COUNT];
	for (int k = 0; k < MF_METRICS; k++)
		total[k] =
		    mf_model_total(m, (enum mf_metric)k, k == MF_METRIC_CALLS ? entry : NULL);
	uint64_t lost = 0, nested = 0, unrec = 0;
	int flag = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		lost = mf_sat_add(lost, m->threads[i].lost, &flag);
		nested = mf_sat_add(nested, m->threads[i].nested, &flag);
	}
	for (size_t i = 0; i < m->nprocesses; i++)
		unrec = mf_sat_add(unrec, m->processes[i].unrecorded_calls, &flag);
	fputs("  \"summary\": {", out);
	mf_json_values(out, "total", total);
	fputs(", \"by_entry\": {", out);
	for (int e = 0, first = 1; e < MF_ENTRY_COUNT; e++)
		if (entry[e]) {
			fprintf(out, "%s\"%s\": %" PRIu64, first ? "" : ", ", mf_entry_names[e],
				entry[e]);
			first = 0;
		}
	int saturated = 0;
	for (int k = 0; k < mf_json_nheld; k++)
		saturated |= mf_model_saturated(m, mf_json_held[k], total[mf_json_held[k]]);
	fprintf(out, "}, \"estimated\": %s, \"saturated\": %s, \"window\": ",
		m->estimated ? "true" : "false", saturated ? "true" : "false");
	mf_json_str(out, o->window && o->window[0] ? o->window : NULL);
	uint64_t start, end;
	if (mf_model_span(m, &start, &end) && end > start)
		fprintf(out, ", \"duration_ns\": %" PRIu64, end - start);
	else
		fputs(", \"duration_ns\": null", out);
	fputs(",\n", out);
	fprintf(out,
		"    \"processes\": %zu, \"threads\": %zu, \"files\": %zu, \"directories\": %zu, "
		"\"lost_calls\": %" PRIu64 ", \"nested_calls\": %" PRIu64
		", \"unrecorded_calls\": %" PRIu64 "},\n",
		m->nprocesses, m->nthreads, o->files, o->dirs, lost, nested, unrec);
}

static void mf_json_modules(FILE *out, const struct mf_model *m)
{
	fputs("  \"modules\": [", out);
	for (size_t i = 0; i < m->nmodules; i++) {
		const struct mf_model_module *mod = &m->modules[i];
		char hex[2 * MF_BUILD_ID_LEN + 1] = "";
		for (uint32_t b = 0; b < mod->build_id_len && b < MF_BUILD_ID_LEN; b++)
			snprintf(hex + 2 * b, 3, "%02x", mod->build_id[b]);
		fprintf(out, "%s\n    {\"id\": %zu, \"path\": ", i ? "," : "", i);
		mf_json_str(out, mod->path);
		fprintf(out, ", \"build_id\": \"%s\"}", hex);
	}
	fputs("\n  ],\n", out);
}

static void mf_json_frames(FILE *out, const struct mf_model *m)
{
	fputs("  \"frames\": [", out);
	for (size_t i = 0; i < m->nframes; i++) {
		const struct mf_frame *f = &m->frames[i];
		fprintf(out, "%s\n    {\"id\": %zu, \"kind\": \"%s\", \"function\": ", i ? "," : "",
			i, mf_json_kinds[f->kind]);
		mf_json_str(out,
			    f->kind == MF_FRAME_ENTRY ? mf_entry_names[f->offset] : f->function);
		fputs(", \"file\": ", out);
		mf_json_str(out, f->file);
		fprintf(out, ", \"line\": %u, \"column\": %u, \"module\": ", f->line, f->column);
		if (f->module == MF_NONE)
			fputs("null", out);
		else
			fprintf(out, "%" PRIu32, f->module);
		fprintf(out, ", \"offset\": %" PRIu64 ", \"inlined\": %s, \"inlined_into\": ",
			f->kind == MF_FRAME_ENTRY ? 0 : f->offset,
			f->inlined_into == MF_NONE ? "false" : "true");
		if (f->inlined_into == MF_NONE)
			fputs("null}", out);
		else
			fprintf(out, "%" PRIu32 "}", f->inlined_into);
	}
	fputs("\n  ],\n", out);
}

static void mf_json_stacks(FILE *out, const struct mf_model *m)
{
	fputs("  \"stacks\": [", out);
	for (size_t i = 0; i < m->nstacks; i++) {
		const struct mf_stack *s = &m->stacks[i];
		const uint32_t *fr = mf_model_stack_frames(m, (uint32_t)i);
		fprintf(out, "%s\n    {\"id\": %zu, \"entry\": \"%s\", \"frames\": [", i ? "," : "",
			i, mf_entry_names[s->entry]);
		for (uint32_t k = 0; k < s->depth; k++)
			fprintf(out, "%s%" PRIu32, k ? ", " : "", fr[k]);
		fputs("]}", out);
	}
	fputs("\n  ],\n", out);
}

/* A process's timeline (timeline.h): its points' running totals, or null when it kept none;
 * with them (format 11) each point's calls and bytes by entry point, of the entry points the
 * process used, else by_entry null. */
static int mf_json_timeline(FILE *out, const struct mf_model *m, uint32_t process)
{
	struct mf_timeline t;
	if (mf_timeline_build(m, process, &t))
		return -ENOMEM;
	if (!t.kept || !t.count) {
		fputs(", \"timeline\": null", out);
		mf_timeline_free(&t);
		return 0;
	}
	fprintf(out,
		", \"timeline\": {\"interval_ns\": %" PRIu64 ", \"unended\": %s, \"columns\": "
		"[\"time_ns\", \"calls\", \"bytes\", \"temporaries\", \"live_bytes\", "
		"\"live_blocks\"], \"points\": [",
		t.interval_ns, t.unended ? "true" : "false");
	for (size_t i = 0; i < t.count; i++) {
		const struct mf_timeline_point *x = &t.points[i];
		fprintf(out, "%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", ",
			i ? ", " : "", x->time_ns, x->calls, x->bytes, x->temporaries,
			x->live_bytes);
		if (x->blocks_known || !t.live)
			fprintf(out, "%" PRIu64 "]", x->live_blocks);
		else
			fputs("null]", out);
	}
	unsigned used = 0;
	for (int e = 0; t.by_entry && e < MF_ENTRY_COUNT; e++)
		used |= (t.points[t.count - 1].by_entry[e].calls != 0) << e;
	fputs(t.by_entry ? "], \"by_entry\": [" : "], \"by_entry\": null", out);
	for (size_t i = 0; t.by_entry && i < t.count; i++) {
		fputs(i ? ", {" : "{", out);
		for (int e = 0, first = 1; e < MF_ENTRY_COUNT; e++)
			if (used & 1u << e) {
				fprintf(
				    out,
				    "%s\"%s\": {\"calls\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
				    first ? "" : ", ", mf_entry_names[e],
				    t.points[i].by_entry[e].calls, t.points[i].by_entry[e].bytes);
				first = 0;
			}
		fputc('}', out);
	}
	fputs(t.by_entry ? "]" : "", out);
	/* (the spread running totals, from which --timeline and --html take their rates) */
	fprintf(out,
		", \"span_ns\": %" PRIu64 ", \"spread_columns\": [\"calls\", \"bytes\", "
		"\"temporaries\", \"calls_before\", \"bytes_before\", \"temporaries_before\"], "
		"\"spread\": [",
		t.span_ns);
	for (size_t i = 0; i < t.count; i++) {
		const uint64_t *a = t.points[i].spread, *b = t.points[i].spread_before;
		fprintf(out,
			"%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
			", %" PRIu64 "]",
			i ? ", " : "", a[MF_SPREAD_CALLS], a[MF_SPREAD_BYTES],
			a[MF_SPREAD_TEMPORARIES], b[MF_SPREAD_CALLS], b[MF_SPREAD_BYTES],
			b[MF_SPREAD_TEMPORARIES]);
	}
	fputs("]}", out);
	mf_timeline_free(&t);
	return 0;
}

/* The processes and threads with their totals (sums of their samples). */
static int mf_json_owners(FILE *out, const struct mf_model *m)
{
	uint64_t *tv[MF_METRICS] = {0}, *pv[MF_METRICS] = {0}, row[MF_METRICS];
	int flag = 0, err = 0;
	if (mf_fold_sums(m, MF_FOLD_BY_THREAD, tv, &flag) ||
	    mf_fold_sums(m, MF_FOLD_BY_PROCESS, pv, &flag)) {
		for (int k = 0; k < MF_METRICS; k++)
			free(tv[k]);
		return -ENOMEM;
	}
	fputs("  \"processes\": [", out);
	for (size_t i = 0; i < m->nprocesses; i++) {
		const struct mf_process *p = &m->processes[i];
		fprintf(out,
			"%s\n    {\"id\": %zu, \"pid\": %" PRIu64 ", \"ppid\": %" PRIu64
			", \"name\": ",
			i ? "," : "", i, p->pid, p->ppid);
		mf_json_str(out, p->name);
		fputs(", \"exe\": ", out);
		mf_json_str(out, p->exe);
		fputs(", \"cmdline\": ", out);
		mf_json_str(out, p->cmdline);
		fprintf(out, ", \"end\": \"%s\", \"status\": ", mf_json_ends[p->end]);
		if (p->status_known || p->end == MF_END_SIGNAL || p->end == MF_END_QUICK_EXIT)
			fprintf(out, "%d, ", p->status);
		else
			fputs("null, ", out);
		mf_fold_row(row, pv, (uint32_t)i);
		mf_json_values(out, "total", row);
		if (mf_json_timeline(out, m, (uint32_t)i)) {
			err = -ENOMEM;
			break;
		}
		putc('}', out);
	}
	fputs("\n  ],\n  \"threads\": [", out);
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct mf_thread *t = &m->threads[i];
		fprintf(out,
			"%s\n    {\"id\": %zu, \"process\": %" PRIu32 ", \"tid\": %" PRIu64
			", \"name\": ",
			i ? "," : "", i, t->process, t->tid);
		char name[MF_THREAD_NAME_LEN + 1];
		memcpy(name, t->name, MF_THREAD_NAME_LEN);
		name[MF_THREAD_NAME_LEN] = 0;
		mf_json_str(out, name);
		fprintf(out,
			", \"sample_rate\": %" PRIu64 ", \"lost_calls\": %" PRIu64
			", \"complete\": %s, ",
			t->sample_rate, t->lost, t->complete ? "true" : "false");
		mf_fold_row(row, tv, (uint32_t)i);
		mf_json_values(out, "total", row);
		putc('}', out);
	}
	fputs("\n  ],\n", out);
	for (int k = 0; k < MF_METRICS; k++) {
		free(tv[k]);
		free(pv[k]);
	}
	return err;
}

static void mf_json_samples(FILE *out, const struct mf_model *m)
{
	fputs("  \"samples\": [", out);
	for (size_t s = 0; s < m->nsamples; s++) {
		uint64_t v[MF_METRICS];
		for (int k = 0; k < MF_METRICS; k++)
			v[k] = m->values[k][s];
		fprintf(out, "%s\n    {\"stack\": %" PRIu32 ", \"thread\": %" PRIu32 ", ",
			s ? "," : "", m->samples[s].stack, m->samples[s].thread);
		mf_json_values(out, "values", v);
		putc('}', out);
	}
	fputs("\n  ]\n", out);
}

int mf_report_json(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	fprintf(out, "{\n  \"format\": \"malloc_freq\", \"version\": %d,\n  \"metrics\": [",
		MF_JSON_VERSION);
	mf_json_nheld = mf_model_metrics(m, NULL, mf_json_held);
	for (int k = 0; k < mf_json_nheld; k++)
		fprintf(out, "%s\"%s\"", k ? ", " : "", mf_metric_info[mf_json_held[k]].name);
	fputs("],\n", out);
	mf_json_summary(out, m, o);
	mf_json_modules(out, m);
	mf_json_frames(out, m);
	mf_json_stacks(out, m);
	int r = mf_json_owners(out, m);
	if (r)
		return r;
	mf_json_samples(out, m);
	fputs("}\n", out);
	return ferror(out) ? -EIO : 0;
}
