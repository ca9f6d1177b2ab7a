/* The outputs of mf_print, each rendering the model in a file of its own and written to a
 * stream. Each returns 0, -ENOMEM, or -EIO when the stream fails. */
#ifndef MF_REPORT_H
#define MF_REPORT_H

#include <stdio.h>

#include "model.h"

struct mf_states;

struct mf_report_options {
	double threshold;      /* percent of the total of metric; smaller paths are folded */
	enum mf_metric metric; /* what the tree and tables are ordered and folded by; what
				 --collapsed counts */
	int lines;	       /* --collapsed: frames carry file:line */
	int full_names;	       /* C++ and Rust names as demangled, not simplified */
	int merge_processes;   /* do not root stacks under their programs */
	int histogram;	       /* --histogram: size histograms of the stacks above threshold */
	int leaks;	       /* --leaks: the stacks with blocks live at the end */
	const char *window;    /* which counts, when not the whole run ("since snapshot 2");
				  NULL or "": the whole run */
	size_t files;	       /* files read, for the summary */
	size_t dirs;
	const struct mf_model *base;	/* --diff: the profile compared against; NULL: none */
	const char *base_name;		/* its directory, as given */
	const char *short_lived;	/* --short-lived as given (the model holds its buckets);
					   NULL: not given */
	const struct mf_states *states; /* --html: the snapshots' states, for its windows;
					   NULL: none read */
};

/* The totals: calls, bytes, threads, files, by entry point, and what the profile lacks. */
int mf_report_summary(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* The tree rooted at the allocation function, its callers below. */
int mf_report_tree(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* The tree top-down: outermost callers first, the allocation function last. */
int mf_report_caller(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* Allocation sites (the function that called the allocator) by thread. */
int mf_report_threads(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* The programs: one line each, the busiest first, with how their processes ended. */
int mf_report_programs(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --processes: every process under the one that started it. */
int mf_report_processes(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* How a process ended, in a few words ("exited 0", "killed by SIGKILL", "still running"). */
void mf_process_end_text(const struct mf_process *p, char *buf, size_t size);
/* --histogram: per stack above the threshold, its size histogram as text bars. */
int mf_report_histogram(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --leaks: the stacks with blocks live at the end (lifetimes), by the sort key. */
int mf_report_leaks(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --timeline: each process's calls, bytes and (lifetimes) live bytes over time, a row per
 * interval. */
int mf_report_timeline(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --tags: the tree of tag paths, each with its calls and bytes, total and self. */
int mf_report_tags(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* One line per distinct stack as shown: "outermost;...;caller;malloc COUNT", ordered frame
 * by frame; for flamegraph.pl and speedscope. */
int mf_report_collapsed(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --pprof: gzipped profile.proto, one sample type per metric; with a base, its samples
 * negated after the profile's own. */
int mf_report_pprof(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --json: the model whole (summary, modules, frames, stacks, processes, threads, samples);
 * its schema is versioned and described in docs/json.md. */
int mf_report_json(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --dot: a call graph for Graphviz: functions with self and total calls and bytes, edges
 * with calls, coloured by self share; what is below the threshold left out. */
int mf_report_dot(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --diff: the base (o->base) against this profile, stacks matched by what they show: totals,
 * the stacks by absolute change of o->metric, and the change as a signed tree. */
int mf_report_diff(FILE *out, const struct mf_model *m, const struct mf_report_options *o);
/* --diff with --collapsed: "stack BASE NOW" per stack (difffolded.pl's two columns). */
int mf_report_diff_collapsed(FILE *out, const struct mf_model *m,
			     const struct mf_report_options *o);
/* --html: one self-contained page (no network): the flame graph (icicle or flame, zoom,
 * search), a metric, process and thread choice, and the threshold tree as a table. */
int mf_report_html(FILE *out, const struct mf_model *m, const struct mf_report_options *o);

#endif
