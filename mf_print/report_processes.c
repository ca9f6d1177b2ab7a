/* The processes of a profile: one line per program (the default reports' second part when there
 * are several processes), or with --processes every process, under its parent. Each says how
 * much it allocated and how it ended. */
#define _GNU_SOURCE /* sigabbrev_np */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/compat.h"
#include "fold.h"
#include "labels.h"
#include "report.h"
#include "text.h"

void mf_process_end_text(const struct mf_process *p, char *buf, size_t size)
{
	const char *sig = p->status > 0 ? sigabbrev_np(p->status) : NULL;
	/* (attached to: its record was made at the attach, start_ns) */
	double detached = p->detached_ns > p->start_ns ? (p->detached_ns - p->start_ns) / 1e9 : 0;
	switch (p->end) {
	case MF_END_RUNNING:
		if (p->detached_ns)
			snprintf(buf, size, "still running, detached at +%.1f s", detached);
		else
			snprintf(buf, size, "still running");
		break;
	case MF_END_DETACHED:
		snprintf(buf, size, "detached at +%.1f s", detached);
		break;
	case MF_END_UNRECORDED:
		if (p->status_known) /* (seen by its parent: see mf_load_process_info) */
			snprintf(buf, size, "ended unrecorded (then its pid exited %d)", p->status);
		else if (p->raw_exit) /* (Go's runtime exits past the profiler) */
			snprintf(buf, size, "ended unrecorded (a Go program)");
		else
			snprintf(buf, size, "ended unrecorded");
		break;
	case MF_END_EXIT:
		if (p->status_known)
			snprintf(buf, size, "exited %d", p->status);
		else
			snprintf(buf, size, "exited");
		break;
	case MF_END_QUICK_EXIT:
		snprintf(buf, size, "_exit(%d)", p->status);
		break;
	case MF_END_SIGNAL:
		if (sig)
			snprintf(buf, size, "killed by SIG%s%s", sig,
				 p->core ? " (core dumped)" : "");
		else
			snprintf(buf, size, "killed by signal %d%s", p->status,
				 p->core ? " (core dumped)" : "");
		break;
	case MF_END_EXEC:
		snprintf(buf, size, "exec'd");
		break;
	default:
		snprintf(buf, size, "end not recorded");
	}
}

/* The calls, share and bytes of a row; estimated: they are sampled estimates ("~", as the
 * summary marks them: in a tree of sampled and unsampled processes, which rows are which). */
static void mf_process_columns(FILE *out, const uint64_t value[MF_METRICS], uint64_t total,
			       enum mf_metric metric, int estimated)
{
	char b[32], c[32];
	mf_text_bytes(b, sizeof(b), value[MF_METRIC_BYTES]);
	snprintf(c, sizeof(c), "%s%" PRIu64, estimated ? "~" : "", value[MF_METRIC_CALLS]);
	fprintf(out, "%12s %6.2f%% %11s", c, mf_text_pct(value[metric], total), b);
}

/* How the processes of a group ended: "pid 1234, exited 0" for one; counts of each ending for
 * several ("3 exited 0, 1 killed by SIGKILL"). */
static void mf_group_ends(const struct mf_model *m, const uint32_t *procs, size_t n, char *buf,
			  size_t size)
{
	char text[64];
	if (n == 1) {
		mf_process_end_text(&m->processes[procs[0]], text, sizeof(text));
		snprintf(buf, size, "pid %" PRIu64 ", %s", m->processes[procs[0]].pid, text);
		return;
	}
	size_t at = (size_t)snprintf(buf, size, "%zu processes:", n);
	char seen[8][64];
	size_t count[8] = {0}, kinds = 0, other = 0;
	for (size_t i = 0; i < n; i++) {
		mf_process_end_text(&m->processes[procs[i]], text, sizeof(text));
		size_t k = 0;
		while (k < kinds && strcmp(seen[k], text))
			k++;
		if (k == kinds && kinds < 8)
			memcpy(seen[kinds++], text, sizeof(text));
		if (k < kinds)
			count[k]++;
		else
			other++;
	}
	for (size_t k = 0; k < kinds && at < size; k++)
		at += (size_t)snprintf(buf + at, size - at, "%s %zu %s", k ? "," : "", count[k],
				       seen[k]);
	if (other && at < size)
		snprintf(buf + at, size - at, ", %zu others", other);
}

int mf_report_programs(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	size_t n = m->nprocesses;
	uint64_t *value[MF_METRICS] = {0};
	uint32_t *items = malloc((n ? n : 1) * sizeof(*items));
	uint32_t *keys = malloc((n ? n : 1) * sizeof(*keys));
	struct mf_labels l = {0};
	struct mf_fold f = {0};
	struct mf_fold_scratch scratch = {0};
	int flag = 0;
	int r = items && keys ? mf_fold_sums(m, MF_FOLD_BY_PROCESS, value, &flag) : -ENOMEM;
	if (!r)
		r = mf_labels_build(&l, m, MF_LABEL_FUNCTION, 0, mf_text_clean);
	if (!r)
		r = mf_labels_rank(&l);
	for (size_t i = 0; !r && i < n; i++) {
		items[i] = (uint32_t)i;
		keys[i] = l.of_process[i];
	}
	if (!r)
		r = mf_fold_group(&f, &scratch, items, NULL, keys, n, value, NULL);
	if (!r) {
		uint64_t total = mf_model_total(m, o->metric, NULL);
		mf_fold_sort(&f, o->metric, total, o->threshold, l.rank);
		fputs("\nPrograms, the busiest first", out);
		if (o->threshold > 0)
			fprintf(out, "; below %g%% of all %s they are folded (--threshold;",
				o->threshold, mf_metric_info[o->metric].plural);
		fprintf(out, "%s--processes lists every process)\n\n",
			o->threshold > 0 ? " " : " (");
		fprintf(out, "%12s %7s %11s %6s %7s %6s  %s\n", "calls", "%", "bytes", "procs",
			"threads", "files", "program: how it ended");
		size_t folded = 0, fold_procs = 0, fold_threads = 0, fold_files = 0;
		for (size_t g = 0; g < f.count; g++) {
			const struct mf_group *grp = &f.groups[g];
			size_t threads = 0, files = 0;
			int sampled = 0;
			for (uint32_t i = grp->first; i < grp->first + grp->count; i++) {
				threads += m->processes[items[i]].threads;
				files += m->processes[items[i]].files;
				sampled |= m->processes[items[i]].sample_rate > 1;
			}
			if (g >= f.shown) {
				folded++;
				fold_procs += grp->count, fold_threads += threads,
				    fold_files += files;
				continue;
			}
			char ends[256];
			mf_group_ends(m, items + grp->first, grp->count, ends, sizeof(ends));
			mf_process_columns(out, grp->value, total, o->metric, sampled);
			fprintf(out, " %6u %7zu %6zu  %.*s: %s\n", grp->count, threads, files,
				(int)l.len[grp->key] - 2, l.text[grp->key] + 1, ends);
		}
		if (folded) {
			mf_process_columns(out, f.folded_value, total, o->metric, m->estimated);
			fprintf(out, " %6zu %7zu %6zu  (%zu more program%s below %g%%)\n",
				fold_procs, fold_threads, fold_files, folded,
				folded == 1 ? "" : "s", o->threshold);
		}
	}
	mf_fold_free(&f);
	mf_fold_scratch_free(&scratch);
	mf_labels_free(&l);
	for (int k = 0; k < MF_METRICS; k++)
		free(value[k]);
	free(keys);
	free(items);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}

/* ---- --processes: every process, under its parent ---------------------------------------- */

#define MF_COMMAND_SHOWN 160 /* bytes of a command line shown */

struct mf_ptree {
	FILE *out;
	const struct mf_model *m;
	uint64_t *value[MF_METRICS];
	uint64_t total;
	enum mf_metric metric;
	uint32_t *order;  /* processes by parent, then start time */
	uint32_t *parent; /* the process each one's parent is, or MF_NONE */
	struct mf_strbuf prefix;
};

static const struct mf_model *mf_ptree_model;
/* By when they started: the processes by their start times (clock ticks), then the records
 * (first allocations). */
static int mf_start_cmp(const void *a, const void *b)
{
	const struct mf_process *x = &mf_ptree_model->processes[*(const uint32_t *)a];
	const struct mf_process *y = &mf_ptree_model->processes[*(const uint32_t *)b];
	if (x->start_ticks != y->start_ticks)
		return x->start_ticks < y->start_ticks ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* When image q began, to compare with c's: the profiler's load into it where both records
 * say (a forked child has its parent's image's), else its record's making. */
static uint64_t mf_image_time(const struct mf_process *q, const struct mf_process *c)
{
	return q->image_ns && c->image_ns ? q->image_ns : q->start_ns;
}

/* The process that started p: the image p's own exec replaced; else, of its parent's pid,
 * the process that started no later than p (by start time: a parent that forked before its
 * own first allocation has a later record than its child's), and of that one's images the
 * one p was forked from: the last that began no later than p's image, else the first. */
static uint32_t mf_parent_of(const struct mf_model *m, uint32_t p)
{
	const struct mf_process *c = &m->processes[p];
	if (c->exec_from != MF_NONE)
		return c->exec_from;
	uint32_t best = MF_NONE;
	int best_fits = 0;
	for (size_t i = 0; c->ppid && i < m->nprocesses; i++) {
		const struct mf_process *q = &m->processes[i];
		if (q->pid != c->ppid || i == p)
			continue;
		int ticks = q->start_ticks && c->start_ticks;
		int fits = mf_image_time(q, c) <= mf_image_time(c, q);
		if ((ticks && q->start_ticks > c->start_ticks) || (!ticks && !fits))
			continue; /* (started after c: the pid's later process) */
		const struct mf_process *b = best == MF_NONE ? NULL : &m->processes[best];
		if (b && q->start_ticks != b->start_ticks) {
			if (q->start_ticks < b->start_ticks)
				continue;
		} else if (b && (fits < best_fits ||
				 (fits == best_fits &&
				  (fits ? mf_image_time(q, c) < mf_image_time(b, c)
					: mf_image_time(q, c) > mf_image_time(b, c))))) {
			continue;
		}
		best = (uint32_t)i;
		best_fits = fits;
	}
	return best;
}

static int mf_ptree_print(struct mf_ptree *t, uint32_t parent, int top)
{
	const struct mf_model *m = t->m;
	size_t kids = 0, shown = 0;
	for (size_t i = 0; i < m->nprocesses; i++)
		kids += t->parent[t->order[i]] == parent;
	int r = 0;
	for (size_t i = 0; i < m->nprocesses && !r; i++) {
		uint32_t p = t->order[i];
		if (t->parent[p] != parent)
			continue;
		const struct mf_process *q = &m->processes[p];
		int last = ++shown == kids;
		uint64_t value[MF_METRICS];
		mf_fold_row(value, t->value, p);
		char end[64], cmd[MF_COMMAND_SHOWN + 1], name[128];
		mf_process_end_text(q, end, sizeof(end));
		const char *line = q->cmdline[0] ? q->cmdline : q->exe;
		mf_text_escape(line, cmd, sizeof(cmd));
		mf_process_columns(t->out, value, t->total, t->metric, q->sample_rate > 1);
		fprintf(t->out, " %7u  %.*s%s%s[%s] %" PRIu64 ", %s: %s%s\n", q->threads,
			(int)t->prefix.len, t->prefix.s,
			top    ? ""
			: last ? "`- "
			       : "|- ",
			q->exec_from != MF_NONE ? "exec " : "",
			mf_text_escape(q->name, name, sizeof(name)), q->pid, end, cmd,
			q->cmdline_cut || strlen(cmd) >= MF_COMMAND_SHOWN ? " ..." : "");
		size_t keep = t->prefix.len;
		r = mf_strbuf_add(&t->prefix, top ? "" : last ? "   " : "|  ", top ? 0 : 3);
		if (!r)
			r = mf_ptree_print(t, p, 0);
		t->prefix.len = keep;
	}
	return r;
}

int mf_report_processes(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	size_t n = m->nprocesses;
	struct mf_ptree t = {.out = out, .m = m, .metric = o->metric};
	t.order = malloc((n ? n : 1) * sizeof(*t.order));
	t.parent = malloc((n ? n : 1) * sizeof(*t.parent));
	int flag = 0;
	int r = t.order && t.parent ? mf_fold_sums(m, MF_FOLD_BY_PROCESS, t.value, &flag) : -ENOMEM;
	if (!r) {
		for (size_t i = 0; i < n; i++) {
			t.order[i] = (uint32_t)i;
			t.parent[i] = mf_parent_of(m, (uint32_t)i);
		}
		mf_ptree_model = m;
		qsort(t.order, n, sizeof(*t.order), mf_start_cmp);
		t.total = mf_model_total(m, o->metric, NULL);
		fprintf(out,
			"\nEvery process under the one that started it (an exec'd image under the "
			"one it replaced), in the order they started\n\n");
		fprintf(out, "%12s %7s %11s %7s  %s\n", "calls", "%", "bytes", "threads",
			"[program] pid, how it ended: command line");
		r = mf_ptree_print(&t, MF_NONE, 1);
	}
	for (int k = 0; k < MF_METRICS; k++)
		free(t.value[k]);
	free(t.order);
	free(t.parent);
	free(t.prefix.s);
	if (!r && ferror(out))
		r = -EIO;
	return r;
}
