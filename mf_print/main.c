/* mf_print: options and orchestration only. Finds profile directories, reads them into one
 * model, prints one report. Exit 0 ok; 1 some input could not be read (the rest is still
 * reported), or none held a profile; 2 usage; 3 --thread or --process chose nothing. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discover.h"
#include "load.h"
#include "model.h"
#include "option_error.h"
#include "report.h"
#include "snapshots.h"
#include "states.h"
#include "symbolize.h"
#include "text.h"

enum { MF_EXIT_OK, MF_EXIT_INPUT, MF_EXIT_USAGE, MF_EXIT_NOTHING_CHOSEN };

enum mf_mode {
	MF_MODE_TREE,
	MF_MODE_COLLAPSED,
	MF_MODE_THREADS,
	MF_MODE_PROCESSES,
	MF_MODE_JSON,
	MF_MODE_DOT,
	MF_MODE_LIST,
	MF_MODE_TAGS,
	MF_MODE_TIMELINE,
	MF_MODE_HTML
};

struct mf_args {
	enum mf_mode mode;
	const char *pprof; /* --pprof FILE, written besides the report chosen */
	const char *diff;  /* --diff BASE */
	struct mf_report_options report;
	int caller, debuginfod, verbose;
	int sort, weight; /* enum mf_metric; weight -1: not given */
	int weights;	  /* --weight, --bytes, --time given */
	int windows;	  /* --snapshot, --since, --between given */
	char window[256];
	struct mf_load load;
	char **dirs;
	size_t ndirs;
	const char *html;	/* --html FILE */
	uint32_t short_buckets; /* --short-lived: mf_model.short_buckets; 0: not given */
	int argc;		/* the command line, for --between's second value */
	char **argv;
};

static void mf_usage(FILE *out)
{
	fputs(
	    "Usage: mf_print [OPTIONS] --dir DIR [--dir DIR]...\n"
	    "       mf_print [OPTIONS] DIR...\n"
	    "Reads the profiles that libmalloc_freq.so wrote to DIR (malloc_freq.<pid>, one\n"
	    "<tid>.prof per thread, those a snapshot packed in ended.pack, the module map and\n"
	    "the process record), merges threads\n"
	    "and processes, symbolizes offline (function, file:line, inlined frames, demangled\n"
	    "names) and prints which call stacks call the allocator how often.\n"
	    "\n"
	    "Reports (default: summary, programs when there are several, and tree):\n"
	    "      (none)            the allocation function at the root, its callers below\n"
	    "  -c, --caller          the tree top-down: outermost caller first\n"
	    "      --collapsed       one line per stack, 'main;f;g;malloc 42', for flamegraph.pl\n"
	    "                        and speedscope\n"
	    "      --histogram       the size histogram of each stack above the threshold, as\n"
	    "                        text bars (format 4 profiles), and with lifetimes that of\n"
	    "                        its freed blocks' lifetimes\n"
	    "      --leaks           the stacks with blocks not freed at the end, the most\n"
	    "                        leaked bytes first (MALLOC_FREQ_LIFETIMES=1 profiles)\n"
	    "      --threads         calls per thread (pid/tid and name) for each function that\n"
	    "                        calls the allocator\n"
	    "      --processes       every process under the one that started it, with how it\n"
	    "                        ended and its command line\n"
	    "      --list            each process's snapshots: number, time, totals, label\n"
	    "      --tags            the tree of tag paths (malloc_freq_tag_push): calls and\n"
	    "                        bytes inside each, with nested tags and alone\n"
	    "      --timeline        each process over time, a row per interval: calls, calls\n"
	    "                        per second, requested bytes, temporaries, with\n"
	    "                        lifetimes the bytes and blocks live, and the calls of\n"
	    "                        each entry point besides malloc (profiles of format 9\n"
	    "                        on, by entry point 11 on; MALLOC_FREQ_TIMELINE)\n"
	    "      --json            the whole profile as JSON: summary, modules, frames,\n"
	    "                        stacks, processes and threads with totals, samples\n"
	    "                        with every counter the profile holds (schema:\n"
	    "                        docs/json.md, version 2)\n"
	    "      --dot             a call graph for Graphviz (dot -Tsvg): functions\n"
	    "                        with self and total calls, bytes and every other\n"
	    "                        metric held, edges with the --sort metric, the\n"
	    "                        redder the larger the self share; --threshold\n"
	    "                        leaves out the small\n"
	    "      --diff BASE       how this profile differs from the one in BASE (a\n"
	    "                        directory), stack by stack, stacks matched by\n"
	    "                        function names (two builds compare): stacks by\n"
	    "                        absolute change and a signed tree; with --collapsed\n"
	    "                        'stack BASE NOW' lines (difffolded.pl's, for\n"
	    "                        flamegraph.pl); with --pprof the base's samples negated\n"
	    "      --pprof FILE      also write a gzipped profile.proto for go tool pprof,\n"
	    "                        Pyroscope, Parca: a sample type per metric held\n"
	    "                        (alloc_calls/count, alloc_space/bytes, cpu/nanoseconds,\n"
	    "                        temporaries/count, leaked_objects/count,\n"
	    "                        leaked_space/bytes, peak_objects/count,\n"
	    "                        peak_space/bytes, short_lived/count), labels\n"
	    "                        thread_id, thread_name, pid, program ('-': to stdout,\n"
	    "                        in place of the report; not with --list)\n"
	    "      --html FILE       one self-contained page (no network): a zoomable flame\n"
	    "                        graph with search, metric (each one held), process and\n"
	    "                        thread choices, the timeline above it (calls per second,\n"
	    "                        live bytes, snapshots marked: two chosen show that\n"
	    "                        window, as --between; the busiest stacks stacked),\n"
	    "                        and the tree as a table ('-': to stdout)\n"
	    "\n"
	    "Options:\n"
	    "  -d, --dir DIR         a profile directory (repeatable); a directory holding\n"
	    "                        malloc_freq.* directories (a process tree: fork, exec, a\n"
	    "                        build) reads them all\n"
	    "  -t, --threshold PCT   fold call paths below PCT percent of the total into one line\n"
	    "                        (default 1.0; 0 shows everything)\n"
	    "  -s, --sort KEY        order and threshold by KEY: calls (default), bytes\n"
	    "                        (requested), time (CPU time before the calls;\n"
	    "                        MALLOC_FREQ_WEIGHT=time), temporary (blocks freed before\n"
	    "                        their thread's next allocation; format 4 profiles), leaked\n"
	    "                        (bytes not freed at the end), peak (bytes live at the\n"
	    "                        process's peak), leaked-blocks, peak-blocks\n"
	    "                        (MALLOC_FREQ_LIFETIMES=1), short (with --short-lived),\n"
	    "                        max-live (the stack's most bytes live at once),\n"
	    "                        max-live-blocks, freed (blocks freed at a known time),\n"
	    "                        lifetime (ns they lived) (lifetimes, format 8)\n"
	    "      --short-lived DURATION  count the blocks each stack freed within DURATION\n"
	    "                        (500ns, 1us, 10ms, 2s), rounded to a power of two ns\n"
	    "                        (the lifetime histogram's bounds; the summary says it):\n"
	    "                        the metric 'short', a --sort and --weight KEY, a tree\n"
	    "                        column (MALLOC_FREQ_LIFETIMES=1 profiles)\n"
	    "      --weight KEY      what --collapsed counts, a --sort KEY (default calls)\n"
	    "      --bytes           --collapsed counts bytes instead of calls (--weight bytes)\n"
	    "      --time            --collapsed counts CPU time (ns) instead of calls (--weight\n"
	    "                        time)\n"
	    "      --lines           --collapsed frames carry file:line (the tree always does)\n"
	    "      --thread TID      only the thread(s) with this thread id\n"
	    "      --process PID|NAME  only the processes of this pid or program (repeatable)\n"
	    "      --snapshot N|LABEL  each process as of its snapshot N (or the last one\n"
	    "                        labelled LABEL) instead of its live files\n"
	    "      --since N|LABEL   only what came after that snapshot (the live profile\n"
	    "                        minus it); --since 0: the whole run (by default counts\n"
	    "                        start at the last malloc_freq_reset, if any)\n"
	    "      --between N M     what came after snapshot N up to snapshot M (with these\n"
	    "                        three, processes without that snapshot are left out,\n"
	    "                        and said so in one line)\n"
	    "      --merge-processes  do not root stacks under their programs ([gcc], [cc1]),\n"
	    "                        as the tree and --collapsed do when there are several\n"
	    "      --full-names      C++ and Rust names in full (by default without template or\n"
	    "                        generic arguments, parameters or return types:\n"
	    "                        std::vector::push_back, <String as Clone>::clone)\n"
	    "      --debuginfod      let elfutils fetch missing debug info from DEBUGINFOD_URLS\n"
	    "                        (off by default: mf_print works offline)\n"
	    "  -v, --verbose         name every module without debug info\n"
	    "  -h, --help            this text\n"
	    "  -V, --version         the version\n"
	    "\n"
	    "Examples:\n"
	    "  LD_PRELOAD=/usr/local/lib/libmalloc_freq.so ./app\n"
	    "  mf_print --dir malloc_freq.1234 --threshold 0.2\n"
	    "  mf_print --dir malloc_freq.1234 --collapsed | flamegraph.pl > flame.svg\n"
	    "  mf_print --threads malloc_freq.1234\n"
	    "  mf_print --process cc1 build-profiles/\n"
	    "  mf_print --pprof app.pb.gz malloc_freq.1234 > /dev/null\n"
	    "  go tool pprof -top -sample_index=alloc_space app.pb.gz\n"
	    "  mf_print --dot --threshold 2 malloc_freq.1234 | dot -Tsvg > graph.svg\n"
	    "  mf_print --diff before/malloc_freq.1234 after/malloc_freq.5678\n"
	    "\n"
	    "Exit status: 0 ok; 1 a file or directory could not be read (the rest is still\n"
	    "reported), held no profile, or lacks what was asked (--leaks, --sort time, ...\n"
	    "on profiles that did not record it); 2 usage error; 3 --thread or --process\n"
	    "chose nothing.\n",
	    out);
}

/* --short-lived's DURATION (a number and ns, us, ms or s) as the lifetime buckets that
 * count as short: those under the power of two ns nearest to it (in ratio), from 1 ns to
 * 2^62 ns. 0, or -1 if it is none of that. */
static int mf_short_lived(const char *text, uint32_t *buckets)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || end == text || !isfinite(v) || v <= 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		double ns = v * units[i].ns;
		if (ns < 1 || ns > 0x1p62)
			return -1;
		uint32_t k = 0; /* (2^k nearest: below its geometric mean with 2^(k+1)) */
		while (k < 62 && ns >= (double)(1ull << k) * 1.41421356)
			k++;
		*buckets = k + 1;
		return 0;
	}
	return -1;
}

/* The metric --sort and --weight name, or -1. */
static int mf_metric_named(const char *name)
{
	for (int k = 0; k < MF_METRICS; k++)
		if (!strcmp(name, mf_metric_info[k].name))
			return k;
	return -1;
}

static int mf_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("mf_print: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\nTry 'mf_print --help'.\n", stderr);
	va_end(ap);
	return MF_EXIT_USAGE;
}

/* ---- options: each a row of mf_options, its value set by a small function ---------------- */

static int mf_opt_dir(struct mf_args *a, char *arg)
{
	a->dirs[a->ndirs++] = arg;
	return 0;
}

static int mf_opt_threshold(struct mf_args *a, char *arg)
{
	char *end;
	errno = 0;
	a->report.threshold = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(a->report.threshold) ||
	    a->report.threshold < 0 || a->report.threshold > 100)
		return mf_usage_error("--threshold '%s': give a percentage from 0 to 100", arg);
	return 0;
}

#define MF_METRIC_NAMES                                                                            \
	"give 'calls', 'bytes', 'time', 'temporary', 'leaked', 'leaked-blocks', 'peak', "          \
	"'peak-blocks', 'short', 'max-live', 'max-live-blocks', 'freed' or 'lifetime'"

static int mf_opt_sort(struct mf_args *a, char *arg)
{
	if ((a->sort = mf_metric_named(arg)) < 0)
		return mf_usage_error("--sort '%s': " MF_METRIC_NAMES, arg);
	return 0;
}

static int mf_opt_weight(struct mf_args *a, char *arg)
{
	if ((a->weight = mf_metric_named(arg)) < 0)
		return mf_usage_error("--weight '%s': " MF_METRIC_NAMES, arg);
	a->weights++;
	return 0;
}

static int mf_opt_bytes(struct mf_args *a, char *arg)
{
	(void)arg;
	a->weight = MF_METRIC_BYTES;
	a->weights++;
	return 0;
}

static int mf_opt_time(struct mf_args *a, char *arg)
{
	(void)arg;
	a->weight = MF_METRIC_TIME;
	a->weights++;
	return 0;
}

static int mf_opt_short_lived(struct mf_args *a, char *arg)
{
	if (mf_short_lived(arg, &a->short_buckets))
		return mf_usage_error("--short-lived '%s': give a duration from 1ns to 146 years "
				      "as a number and ns, us, ms or s (10ms)",
				      arg);
	a->report.short_lived = arg;
	return 0;
}

static int mf_opt_diff(struct mf_args *a, char *arg)
{
	if (!arg[0])
		return mf_usage_error("--diff '': give the base's profile directory");
	a->diff = arg;
	return 0;
}

static int mf_opt_html(struct mf_args *a, char *arg)
{
	if (!arg[0])
		return mf_usage_error("--html '': give the file to write");
	a->html = arg;
	return 0;
}

static int mf_opt_pprof(struct mf_args *a, char *arg)
{
	if (!arg[0])
		return mf_usage_error("--pprof '': give a file name ('-': stdout)");
	a->pprof = arg;
	return 0;
}

static int mf_opt_thread(struct mf_args *a, char *arg)
{
	char *end;
	errno = 0;
	a->load.thread = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-')
		return mf_usage_error("--thread '%s': give a thread id (a number)", arg);
	a->load.have_thread = 1;
	return 0;
}

static int mf_opt_process(struct mf_args *a, char *arg)
{
	if (!arg[0])
		return mf_usage_error("--process '': give a pid or a program name");
	a->load.process[a->load.nprocess++] = arg;
	return 0;
}

/* The window's words in the report's heading: "WORDS snapshot NAME" (NAME made printable). */
static void mf_window_text(struct mf_args *a, const char *words, const char *name)
{
	char text[128];
	size_t at = strlen(a->window);
	snprintf(a->window + at, sizeof(a->window) - at, "%s snapshot %s", words,
		 mf_text_escape(name, text, sizeof(text)));
}

static int mf_opt_snapshot(struct mf_args *a, char *arg)
{
	if (!arg[0] || !strcmp(arg, "0"))
		return mf_usage_error("--snapshot '%s': give a snapshot's number (from 1) or label",
				      arg);
	a->load.top = arg;
	a->windows++;
	a->window[0] = 0;
	mf_window_text(a, "as of", arg);
	return 0;
}

static int mf_opt_since(struct mf_args *a, char *arg)
{
	if (!arg[0])
		return mf_usage_error("--since '': give a snapshot's number or label");
	a->windows++;
	if (!strcmp(arg, "0")) {
		a->load.whole = 1;
		return 0;
	}
	a->load.base = arg;
	a->window[0] = 0;
	mf_window_text(a, "since", arg);
	return 0;
}

/* (--between takes its second value from the next argument) */
static int mf_opt_between(struct mf_args *a, char *arg)
{
	if (optind >= a->argc || !arg[0] || !a->argv[optind][0] || !strcmp(arg, "0") ||
	    !strcmp(a->argv[optind], "0"))
		return mf_usage_error("--between needs two snapshots (numbers from 1 or labels): "
				      "--between N M");
	a->load.base = arg;
	a->load.top = a->argv[optind++];
	a->windows++;
	a->window[0] = 0;
	mf_window_text(a, "after", a->load.base);
	mf_window_text(a, " up to", a->load.top);
	return 0;
}

static int mf_opt_help(struct mf_args *a, char *arg)
{
	(void)a, (void)arg;
	mf_usage(stdout);
	exit(MF_EXIT_OK);
}

static int mf_opt_version(struct mf_args *a, char *arg)
{
	(void)a, (void)arg;
	printf("mf_print (malloc_freq) %s\n", PACKAGE_VERSION);
	exit(MF_EXIT_OK);
}

/* One option: its names, and what it does: a report of its own (mode), a flag of mf_args set
 * to 1 (flag, an offset), or a function given its value. */
struct mf_option {
	const char *name;
	char letter; /* its short form; 0: none */
	int has_arg;
	enum mf_mode mode; /* (0, the tree, for the options that choose no report) */
	size_t flag;	   /* offsetof(struct mf_args, an int); 0: none */
	int (*set)(struct mf_args *a, char *arg);
};

#define MF_MODE(n, m)                                                                              \
	{                                                                                          \
		n, 0, no_argument, m, 0, NULL                                                      \
	}
#define MF_FLAG(n, l, field)                                                                       \
	{                                                                                          \
		n, l, no_argument, 0, offsetof(struct mf_args, field), NULL                        \
	}
#define MF_VALUE(n, l, fn)                                                                         \
	{                                                                                          \
		n, l, required_argument, 0, 0, fn                                                  \
	}

static const struct mf_option mf_options[] = {
    MF_VALUE("dir", 'd', mf_opt_dir),
    MF_VALUE("threshold", 't', mf_opt_threshold),
    MF_VALUE("sort", 's', mf_opt_sort),
    MF_FLAG("caller", 'c', caller),
    MF_MODE("collapsed", MF_MODE_COLLAPSED),
    MF_MODE("threads", MF_MODE_THREADS),
    MF_MODE("processes", MF_MODE_PROCESSES),
    {"bytes", 0, no_argument, 0, 0, mf_opt_bytes},
    MF_VALUE("weight", 0, mf_opt_weight),
    MF_FLAG("histogram", 0, report.histogram),
    MF_FLAG("leaks", 0, report.leaks),
    MF_FLAG("lines", 0, report.lines),
    MF_VALUE("thread", 0, mf_opt_thread),
    MF_VALUE("process", 0, mf_opt_process),
    MF_FLAG("merge-processes", 0, report.merge_processes),
    MF_FLAG("debuginfod", 0, debuginfod),
    MF_FLAG("full-names", 0, report.full_names),
    MF_MODE("list", MF_MODE_LIST),
    MF_MODE("tags", MF_MODE_TAGS),
    MF_MODE("timeline", MF_MODE_TIMELINE),
    {"time", 0, no_argument, 0, 0, mf_opt_time},
    MF_VALUE("snapshot", 0, mf_opt_snapshot),
    MF_VALUE("since", 0, mf_opt_since),
    MF_VALUE("between", 0, mf_opt_between),
    MF_VALUE("pprof", 0, mf_opt_pprof),
    MF_MODE("json", MF_MODE_JSON),
    MF_MODE("dot", MF_MODE_DOT),
    MF_VALUE("diff", 0, mf_opt_diff),
    {"html", 0, required_argument, MF_MODE_HTML, 0, mf_opt_html},
    MF_VALUE("short-lived", 0, mf_opt_short_lived),
    MF_FLAG("verbose", 'v', verbose),
    {"help", 'h', no_argument, 0, 0, mf_opt_help},
    {"version", 'V', no_argument, 0, 0, mf_opt_version},
};
#define MF_NOPTIONS (sizeof(mf_options) / sizeof(mf_options[0]))

/* The option getopt_long returned as c (a letter, or 256 + its row), or NULL. */
static const struct mf_option *mf_option_of(int c)
{
	if (c >= 256 && (size_t)(c - 256) < MF_NOPTIONS)
		return &mf_options[c - 256];
	for (size_t i = 0; i < MF_NOPTIONS; i++)
		if (mf_options[i].letter && mf_options[i].letter == c)
			return &mf_options[i];
	return NULL;
}

/* What the options chose that do not go together, or lack what they need; said as a usage
 * error. */
static int mf_check_args(struct mf_args *a, int modes)
{
	if (modes > 1)
		return mf_usage_error(
		    "choose one of --collapsed, --threads, --processes, --json, --dot, --list, "
		    "--tags, --timeline and --html");
	if (a->windows > 1)
		return mf_usage_error("choose one of --snapshot, --since and --between");
	if (a->mode == MF_MODE_HTML && a->pprof && !strcmp(a->html, "-") && !strcmp(a->pprof, "-"))
		return mf_usage_error("--html - and --pprof - would both go to stdout: give one a "
				      "file");
	if ((a->windows || a->pprof || a->load.have_thread || a->load.nprocess) &&
	    a->mode == MF_MODE_LIST)
		return mf_usage_error(
		    "--list names every snapshot of every process; it does not go "
		    "with --snapshot, --since, --between, --pprof, --thread or "
		    "--process");
	if (a->caller && a->mode != MF_MODE_TREE)
		return mf_usage_error("--caller shapes the tree; it does not go with --collapsed, "
				      "--threads, --processes, --json, --dot, --list, --tags or "
				      "--html");
	if ((a->weight >= 0 || a->report.lines) && a->mode != MF_MODE_COLLAPSED)
		return mf_usage_error(
		    "--bytes, --time, --weight and --lines go with --collapsed "
		    "(the tree shows every count; use --sort to order it by one)");
	if (a->weights > 1)
		return mf_usage_error("--collapsed counts one thing: one of --bytes, --time and "
				      "--weight");
	if ((a->report.histogram || a->report.leaks) && (a->mode != MF_MODE_TREE || a->caller))
		return mf_usage_error("--histogram and --leaks are reports of their own; they do "
				      "not go with --caller, --collapsed, --threads, --processes, "
				      "--json, --dot, --list, --tags or --html");
	if (a->report.histogram && a->report.leaks)
		return mf_usage_error("choose one of --histogram and --leaks");
	if (a->diff && (a->caller || a->report.histogram || a->report.leaks ||
			(a->mode != MF_MODE_TREE && a->mode != MF_MODE_COLLAPSED)))
		return mf_usage_error("--diff goes with the tree (the default), --collapsed and "
				      "--pprof");
	if (!a->ndirs)
		return mf_usage_error("no profile directory given (--dir DIR)");
	a->report.metric = a->mode == MF_MODE_COLLAPSED
			       ? (a->weight >= 0 ? (enum mf_metric)a->weight : MF_METRIC_CALLS)
			   : a->sort >= 0    ? (enum mf_metric)a->sort
			   : a->report.leaks ? MF_METRIC_LEAKED
					     : MF_METRIC_CALLS;
	if ((a->sort == MF_METRIC_SHORT || a->weight == MF_METRIC_SHORT) && !a->short_buckets)
		return mf_usage_error("--%s short: give the threshold with --short-lived DURATION",
				      a->sort == MF_METRIC_SHORT ? "sort" : "weight");
	return 0;
}

static int mf_parse_args(int argc, char **argv, struct mf_args *a)
{
	static struct option opts[MF_NOPTIONS + 1];
	char letters[2 * MF_NOPTIONS + 2] = ":";
	for (size_t i = 0, at = 1; i < MF_NOPTIONS; i++) {
		const struct mf_option *o = &mf_options[i];
		opts[i] = (struct option){o->name, o->has_arg, NULL,
					  o->letter ? o->letter : 256 + (int)i};
		if (o->letter) {
			letters[at++] = o->letter;
			if (o->has_arg)
				letters[at++] = ':';
		}
	}
	memset(a, 0, sizeof(*a));
	a->argc = argc;
	a->argv = argv;
	a->report.threshold = 1.0;
	a->weight = a->sort = -1;
	a->dirs = calloc((size_t)argc + 1, sizeof(char *));
	a->load.process = calloc((size_t)argc + 1, sizeof(char *));
	if (!a->dirs || !a->load.process)
		return mf_usage_error("out of memory");
	int modes = 0, c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, letters, opts, NULL)) != -1) {
		const struct mf_option *o = mf_option_of(c);
		if (c == ':')
			return mf_usage_error("%s needs a value", argv[optind - 1]);
		if (!o) {
			char why[256];
			return mf_usage_error(
			    "%s",
			    mf_option_error(why, sizeof(why), argv[optind - 1], optopt, opts));
		}
		if (o->set && o->set(a, optarg))
			return MF_EXIT_USAGE;
		if (o->flag)
			*(int *)((char *)a + o->flag) = 1;
		if (o->mode) {
			a->mode = o->mode;
			modes++;
		}
	}
	for (int i = optind; i < argc; i++)
		a->dirs[a->ndirs++] = argv[i];
	return mf_check_args(a, modes);
}

/* The symbolizer's warnings: modules without debug info in one line (-v: each), the others as
 * they are. */
struct mf_warnings {
	int verbose;
	size_t nodebug;
	char names[3][64];
};

static void mf_print_warning(int kind, const char *path, const char *msg, void *arg)
{
	struct mf_warnings *w = arg;
	char text[4096];
	if (kind == MF_SYM_WARN_NO_DEBUG_INFO && !w->verbose) {
		if (w->nodebug < 3) {
			const char *base = strrchr(path, '/');
			mf_text_escape(base ? base + 1 : path, w->names[w->nodebug],
				       sizeof(w->names[0]));
		}
		w->nodebug++;
		return;
	}
	fprintf(stderr, "mf_print: warning: %s\n", mf_text_escape(msg, text, sizeof(text)));
}

static void mf_print_nodebug(const struct mf_warnings *w)
{
	size_t n = w->nodebug;
	if (!n)
		return;
	char names[256];
	snprintf(names, sizeof(names), "%s%s%s%s%s", w->names[0], n > 1 ? ", " : "",
		 n > 1 ? w->names[1] : "", n > 2 ? ", " : "",
		 n > 3	 ? "..."
		 : n > 2 ? w->names[2]
			 : "");
	if (n == 1)
		fprintf(stderr,
			"mf_print: warning: 1 module without debug info (%s): its frames have no "
			"file:line; install its -dbgsym package or rebuild it with -g\n",
			names);
	else
		fprintf(stderr,
			"mf_print: warning: %zu modules without debug info (%s): their frames have "
			"no file:line; install their -dbgsym packages or rebuild them with -g (-v "
			"names them all)\n",
			n, names);
}

/* Profiles are read where they lie (mapped): one that another program cuts shorter meanwhile
 * raises SIGBUS. Say so rather than die silently. */
static void mf_sigbus(int sig)
{
	static const char msg[] = "mf_print: a profile file was cut shorter while it was read\n";
	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
	}
	_exit(MF_EXIT_INPUT);
}

/* A report to a file of its own (--pprof FILE, --html FILE): written whole or not at all. 0, or
 * -errno with the file named on stderr. */
static int mf_report_file(const struct mf_model *m, const struct mf_args *a, const char *path,
			  int (*report)(FILE *, const struct mf_model *,
					const struct mf_report_options *))
{
	if (!strcmp(path, "-"))
		return report(stdout, m, &a->report);
	char text[4096];
	FILE *f = fopen(path, "wb");
	if (!f) {
		int e = errno;
		fprintf(stderr, "mf_print: %s: %s\n", mf_text_escape(path, text, sizeof(text)),
			strerror(e));
		return -e;
	}
	int r = report(f, m, &a->report);
	if (fclose(f) && !r)
		r = -EIO;
	if (r) {
		fprintf(stderr, "mf_print: %s: %s\n", mf_text_escape(path, text, sizeof(text)),
			r == -ENOMEM ? "out of memory"
			: r == -EIO  ? "write error"
				     : strerror(-r));
		unlink(path);
	}
	return r;
}

/* The report chosen: after the summary and, with several processes, the programs
 * (--collapsed: alone). */
static int mf_report(const struct mf_model *m, const struct mf_args *a)
{
	int to_stdout = a->pprof && !strcmp(a->pprof, "-"); /* (then it alone goes there) */
	if (a->mode == MF_MODE_HTML) {			    /* (1: said, with the file named) */
		if (mf_report_file(m, a, a->html, mf_report_html))
			return 1;
		return to_stdout ? mf_report_pprof(stdout, m, &a->report) : 0;
	}
	if (to_stdout)
		return mf_report_pprof(stdout, m, &a->report);
	/* (its lines have no room to say so: flamegraph.pl reads them) */
	if (a->mode == MF_MODE_COLLAPSED &&
	    (m->estimated || (a->diff && a->report.base && a->report.base->estimated)))
		fprintf(stderr, "mf_print: the counts are estimates: some files were sampled "
				"(MALLOC_FREQ_SAMPLE), their counts scaled by the sampling rate\n");
	if (a->diff)
		return a->mode == MF_MODE_COLLAPSED
			   ? mf_report_diff_collapsed(stdout, m, &a->report)
			   : mf_report_diff(stdout, m, &a->report);
	if (a->mode == MF_MODE_COLLAPSED)
		return mf_report_collapsed(stdout, m, &a->report);
	if (a->mode == MF_MODE_JSON)
		return mf_report_json(stdout, m, &a->report);
	if (a->mode == MF_MODE_DOT)
		return mf_report_dot(stdout, m, &a->report);
	int r = mf_report_summary(stdout, m, &a->report);
	if (r)
		return r;
	if (a->mode == MF_MODE_PROCESSES)
		return mf_report_processes(stdout, m, &a->report);
	if (a->mode == MF_MODE_TAGS)
		return mf_report_tags(stdout, m, &a->report);
	if (a->mode == MF_MODE_TIMELINE)
		return mf_report_timeline(stdout, m, &a->report);
	if (m->nprocesses > 1 && (r = mf_report_programs(stdout, m, &a->report)))
		return r;
	if (a->mode == MF_MODE_THREADS)
		return mf_report_threads(stdout, m, &a->report);
	if (a->report.histogram)
		return mf_report_histogram(stdout, m, &a->report);
	if (a->report.leaks)
		return mf_report_leaks(stdout, m, &a->report);
	return a->caller ? mf_report_caller(stdout, m, &a->report)
			 : mf_report_tree(stdout, m, &a->report);
}

/* Says that --thread or --process chose nothing, and what there is. */
static void mf_nothing_chosen(const struct mf_args *a)
{
	char text[256];
	if (a->load.nprocess && !a->load.chosen) {
		fprintf(stderr, "mf_print: no process here is");
		for (size_t i = 0; i < a->load.nprocess; i++)
			fprintf(stderr, "%s %s", i ? " or" : "",
				mf_text_escape(a->load.process[i], text, sizeof(text)));
		fprintf(stderr, " (--process); the programs are:");
		for (size_t i = 0; i < a->load.nprograms && i < 20; i++)
			fprintf(stderr, " %s",
				mf_text_escape(a->load.programs[i], text, sizeof(text)));
		fprintf(stderr, "%s\n", a->load.nprograms > 20 ? " ..." : "");
	} else if (a->load.have_thread)
		fprintf(stderr, "mf_print: no thread with id %llu in the profiles read%s\n",
			(unsigned long long)a->load.thread,
			a->load.nprocess ? " (of the processes chosen)" : "");
}

/* --diff BASE: the base read into a model of its own, with the same choice of processes and
 * threads. 0; 1 when it could not be read or held no profile (said on stderr); or -ENOMEM. */
static int mf_load_base(struct mf_model *base, const struct mf_args *a, struct mf_symbolizer *sym)
{
	struct mf_found_list found = {0};
	/* (the same choice, and the same window: --since one compares what came after
	 * snapshot one in each) */
	struct mf_load ld = {.have_thread = a->load.have_thread,
			     .thread = a->load.thread,
			     .process = a->load.process,
			     .nprocess = a->load.nprocess,
			     .top = a->load.top,
			     .base = a->load.base,
			     .whole = a->load.whole};
	int r = mf_model_init(base, sym);
	base->short_buckets = a->short_buckets;
	if (!r) {
		int d = mf_discover(&found, a->diff);
		ld.failed |= d > 0;
		r = d < 0 ? d : 0;
	}
	for (size_t i = 0; !r && i < found.count; i++)
		r = mf_load_dir(base, &found.v[i], &ld);
	if (!r)
		r = mf_model_finish(base);
	if (!r && (ld.failed || !ld.threads)) {
		char text[4096];
		fprintf(stderr, "mf_print: %s: %s\n", mf_text_escape(a->diff, text, sizeof(text)),
			ld.failed ? "the base (--diff) could not be read: no diff made"
				  : "no profile to compare against (--diff)");
		r = 1;
	}
	mf_found_free(&found);
	ld.process = NULL; /* (not its own) */
	ld.nprocess = 0;
	mf_load_free(&ld);
	return r;
}

/* The window of counts no option chose: a snapshot directory named as a profile directory,
 * or the processes' last malloc_freq_reset; said in the summary. */
static void mf_window_implied(struct mf_args *a)
{
	if (a->windows)
		return;
	if (a->load.snapshots && !a->load.resets) {
		char text[sizeof(a->load.snapshot) * 3 + 8];
		snprintf(a->window, sizeof(a->window), "as of the snapshot%s %s",
			 a->load.snapshots > 1 ? "s named, the first" : "",
			 mf_text_escape(a->load.snapshot, text, sizeof(text)));
	} else if (a->load.resets)
		snprintf(a->window, sizeof(a->window),
			 "since the last malloc_freq_reset of %zu process%s (--since 0: the whole "
			 "run)",
			 a->load.resets, a->load.resets == 1 ? "" : "es");
}

/* Whether the report asked for needs a column the profiles do not hold (time, temporaries,
 * lifetimes); said on stderr. */
static int mf_lacking(const struct mf_args *a, const struct mf_model *m)
{
	enum mf_metric k = a->report.metric;
	if (k == MF_METRIC_TIME && !m->weighted) {
		fprintf(stderr, "mf_print: these profiles hold no time: record with malloc_freq "
				"--weight time, or MALLOC_FREQ_WEIGHT=time, for --sort time and "
				"--collapsed --time\n");
		return 1;
	}
	if (k == MF_METRIC_TEMPORARY && !m->has_leaf_records) {
		fprintf(stderr,
			"mf_print: --%s temporary: these profiles (format 3 or older) do not "
			"record temporaries\n",
			a->mode == MF_MODE_COLLAPSED ? "weight" : "sort");
		return 1;
	}
	if ((a->report.leaks || k >= MF_METRIC_LEAKED_BLOCKS) && !m->has_lifetimes) {
		fprintf(stderr,
			"mf_print: %s: these profiles have no lifetimes (record them with "
			"malloc_freq --lifetimes, or MALLOC_FREQ_LIFETIMES=1)\n",
			a->report.leaks ? "--leaks" : mf_metric_info[k].name);
		return 1;
	}
	if (k >= MF_METRIC_MAX_BLOCKS && !mf_model_holds(m, k)) {
		fprintf(stderr,
			"mf_print: %s: %zu of these profiles' thread files (format 7 or older) "
			"do not record the most live at once and the lifetimes' sum\n",
			mf_metric_info[k].name, m->life_old);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mf_args a;
	int r = mf_parse_args(argc, argv, &a);
	if (r) {
		free(a.dirs);
		free(a.load.process);
		return r;
	}
	if (!a.debuginfod)
		unsetenv("DEBUGINFOD_URLS");
	signal(SIGBUS, mf_sigbus);
	struct mf_found_list found = {0};
	struct mf_model m = {0}, base = {0}; /* (base: --diff's) */
	struct mf_states states = {0};	     /* (--html's windows) */
	int base_failed = 0;
	struct mf_symbolizer *sym = mf_sym_new();
	struct mf_warnings warnings = {.verbose = a.verbose};
	int status = MF_EXIT_OK;
	r = sym ? mf_model_init(&m, sym) : -ENOMEM;
	m.short_buckets = a.short_buckets;
	for (size_t i = 0; !r && i < a.ndirs; i++) {
		int d = mf_discover(&found, a.dirs[i]);
		a.load.failed |= d > 0;
		r = d < 0 ? d : 0;
	}
	if (!r && a.mode == MF_MODE_LIST) {
		r = mf_snapshot_list(stdout, &found, mf_load_program);
		a.load.failed |= r > 0;
		r = r > 0 ? 0 : r;
		if (!r && fflush(stdout))
			r = -errno;
		status = r ? MF_EXIT_INPUT : a.load.failed ? MF_EXIT_INPUT : MF_EXIT_OK;
		if (r)
			fprintf(stderr, "mf_print: %s\n",
				r == -ENOMEM ? "out of memory" : "write error");
		goto out;
	}
	for (size_t i = 0; !r && i < found.count; i++)
		r = mf_load_dir(&m, &found.v[i], &a.load);
	if (!r)
		a.load.failed |= mf_load_lacking(&a.load);
	mf_window_implied(&a);
	a.report.window = a.window;
	if (!r)
		r = mf_model_finish(&m);
	if (!r && a.diff && a.load.threads) {
		r = mf_load_base(&base, &a, sym);
		base_failed = r == 1;
		r = r == 1 ? 0 : r;
		a.report.base = &base;
		a.report.base_name = a.diff;
	}
	if (!r && a.mode == MF_MODE_HTML && a.load.threads && !a.load.failed) {
		r = mf_states_load(&states, &m, &found, &a.load, sym);
		a.report.states = &states;
	}
	int chose_nothing = (a.load.have_thread || a.load.nprocess) && !a.load.threads &&
			    a.load.files + a.load.unchosen + a.load.passed > 0;
	if (!r && chose_nothing) {
		mf_nothing_chosen(&a);
		status = MF_EXIT_NOTHING_CHOSEN;
	}
	if (base_failed) {
		status = MF_EXIT_INPUT;
	} else if (!r && a.load.threads && mf_lacking(&a, &m)) {
		status = MF_EXIT_INPUT;
	} else if (!r && a.load.threads) {
		mf_sym_warnings(sym, mf_print_warning, &warnings);
		mf_print_nodebug(&warnings);
		a.report.files = a.load.files;
		a.report.dirs = a.load.dirs_used; /* (not those --process, --thread or a window
						     left out) */
		if (a.pprof && strcmp(a.pprof, "-") &&
		    mf_report_file(&m, &a, a.pprof, mf_report_pprof))
			status = MF_EXIT_INPUT; /* (said; the report on stdout is still made) */
		r = mf_report(&m, &a);
		if (r > 0) /* (said already: the --html file) */
			status = MF_EXIT_INPUT, r = 0;
	}
	if (!r && fflush(stdout))
		r = -errno;
	if (r) {
		fprintf(stderr, "mf_print: %s\n",
			r == -ENOMEM ? "out of memory"
			: r == -EIO  ? "write error"
				     : strerror(-r));
		status = MF_EXIT_INPUT;
	}
	/* (a window that holds no thread's file, as a snapshot taken before the first call:
	 * said, where the exit status alone told nothing) */
	if (!a.load.failed && !a.load.threads && !status && !r && a.windows)
		fprintf(stderr, "mf_print: nothing to report %s: no thread had a file then\n",
			a.window);
	if (a.load.failed || (!a.load.threads && !status && !r))
		status = MF_EXIT_INPUT; /* (what could not be read may be what was asked for) */
out:
	mf_found_free(&found);
	mf_model_free(&m);
	mf_model_free(&base);
	mf_states_free(&states);
	mf_load_free(&a.load);
	if (sym)
		mf_sym_free(sym);
	free(a.dirs);
	free(a.load.process);
	return status;
}
