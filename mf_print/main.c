/* mf_print: options and orchestration only. Finds profile directories, reads them into one
 * model, prints one report. Exit 0 ok; 1 some input could not be read (the rest is still
 * reported), or none held a profile; 2 usage; 3 --thread or --process chose nothing. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
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
};

static void mf_usage(FILE *out)
{
	fputs(
	    "Usage: mf_print [OPTIONS] --dir DIR [--dir DIR]...\n"
	    "       mf_print [OPTIONS] DIR...\n"
	    "Reads the profiles that libmalloc_freq.so wrote to DIR (malloc_freq.<pid>, one\n"
	    "<tid>.prof per thread plus the module map and the process record), merges threads\n"
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
	    "      --json            the whole profile as JSON: summary, modules, frames,\n"
	    "                        stacks, processes and threads with totals, samples\n"
	    "                        with every counter the profile holds (schema:\n"
	    "                        README.md, 'JSON', version 2)\n"
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
	    "                        thread choices,\n"
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
	    "                        (MALLOC_FREQ_LIFETIMES=1), short (with --short-lived)\n"
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

static int mf_parse_args(int argc, char **argv, struct mf_args *a)
{
	enum {
		OPT_COLLAPSED = 256,
		OPT_THREADS,
		OPT_PROCESSES,
		OPT_BYTES,
		OPT_LINES,
		OPT_THREAD,
		OPT_PROCESS,
		OPT_MERGE_PROCESSES,
		OPT_DEBUGINFOD,
		OPT_FULL_NAMES,
		OPT_WEIGHT,
		OPT_HISTOGRAM,
		OPT_LEAKS,
		OPT_LIST,
		OPT_SNAPSHOT,
		OPT_SINCE,
		OPT_BETWEEN,
		OPT_TAGS,
		OPT_TIME,
		OPT_PPROF,
		OPT_JSON,
		OPT_DOT,
		OPT_DIFF,
		OPT_HTML,
		OPT_SHORT_LIVED
	};
	static const struct option opts[] = {
	    {"dir", required_argument, NULL, 'd'},
	    {"threshold", required_argument, NULL, 't'},
	    {"sort", required_argument, NULL, 's'},
	    {"caller", no_argument, NULL, 'c'},
	    {"collapsed", no_argument, NULL, OPT_COLLAPSED},
	    {"threads", no_argument, NULL, OPT_THREADS},
	    {"processes", no_argument, NULL, OPT_PROCESSES},
	    {"bytes", no_argument, NULL, OPT_BYTES},
	    {"weight", required_argument, NULL, OPT_WEIGHT},
	    {"histogram", no_argument, NULL, OPT_HISTOGRAM},
	    {"leaks", no_argument, NULL, OPT_LEAKS},
	    {"lines", no_argument, NULL, OPT_LINES},
	    {"thread", required_argument, NULL, OPT_THREAD},
	    {"process", required_argument, NULL, OPT_PROCESS},
	    {"merge-processes", no_argument, NULL, OPT_MERGE_PROCESSES},
	    {"debuginfod", no_argument, NULL, OPT_DEBUGINFOD},
	    {"full-names", no_argument, NULL, OPT_FULL_NAMES},
	    {"list", no_argument, NULL, OPT_LIST},
	    {"tags", no_argument, NULL, OPT_TAGS},
	    {"time", no_argument, NULL, OPT_TIME},
	    {"snapshot", required_argument, NULL, OPT_SNAPSHOT},
	    {"since", required_argument, NULL, OPT_SINCE},
	    {"between", required_argument, NULL, OPT_BETWEEN},
	    {"pprof", required_argument, NULL, OPT_PPROF},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"dot", no_argument, NULL, OPT_DOT},
	    {"diff", required_argument, NULL, OPT_DIFF},
	    {"html", required_argument, NULL, OPT_HTML},
	    {"short-lived", required_argument, NULL, OPT_SHORT_LIVED},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->report.threshold = 1.0;
	a->weight = a->sort = -1;
	a->dirs = calloc((size_t)argc + 1, sizeof(char *));
	a->load.process = calloc((size_t)argc + 1, sizeof(char *));
	if (!a->dirs || !a->load.process)
		return mf_usage_error("out of memory");
	int modes = 0, c;
	char text[128]; /* (a snapshot named in the window, made printable) */
	char *end;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:t:s:cvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			a->dirs[a->ndirs++] = optarg;
			break;
		case 't':
			errno = 0;
			a->report.threshold = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(a->report.threshold) ||
			    a->report.threshold < 0 || a->report.threshold > 100)
				return mf_usage_error(
				    "--threshold '%s': give a percentage from 0 to 100", optarg);
			break;
		case 's':
			if ((a->sort = mf_metric_named(optarg)) < 0)
				return mf_usage_error("--sort '%s': give 'calls', 'bytes', 'time', "
						      "'temporary', 'leaked', 'leaked-blocks', "
						      "'peak', 'peak-blocks' or 'short'",
						      optarg);
			break;
		case OPT_WEIGHT:
			if ((a->weight = mf_metric_named(optarg)) < 0)
				return mf_usage_error(
				    "--weight '%s': give 'calls', 'bytes', 'time', "
				    "'temporary', 'leaked', 'leaked-blocks', "
				    "'peak', 'peak-blocks' or 'short'",
				    optarg);
			a->weights++;
			break;
		case OPT_HISTOGRAM:
			a->report.histogram = 1;
			break;
		case OPT_SHORT_LIVED:
			if (mf_short_lived(optarg, &a->short_buckets))
				return mf_usage_error(
				    "--short-lived '%s': give a duration from 1ns to "
				    "146 years as a number and ns, us, ms or s "
				    "(10ms)",
				    optarg);
			a->report.short_lived = optarg;
			break;
		case OPT_LEAKS:
			a->report.leaks = 1;
			break;
		case 'c':
			a->caller = 1;
			break;
		case OPT_COLLAPSED:
			a->mode = MF_MODE_COLLAPSED;
			modes++;
			break;
		case OPT_THREADS:
			a->mode = MF_MODE_THREADS;
			modes++;
			break;
		case OPT_PROCESSES:
			a->mode = MF_MODE_PROCESSES;
			modes++;
			break;
		case OPT_JSON:
			a->mode = MF_MODE_JSON;
			modes++;
			break;
		case OPT_DOT:
			a->mode = MF_MODE_DOT;
			modes++;
			break;
		case OPT_DIFF:
			if (!optarg[0])
				return mf_usage_error(
				    "--diff '': give the base's profile directory");
			a->diff = optarg;
			break;
		case OPT_HTML:
			if (!optarg[0])
				return mf_usage_error("--html '': give the file to write");
			a->html = optarg;
			a->mode = MF_MODE_HTML;
			modes++;
			break;
		case OPT_BYTES:
			a->weight = MF_METRIC_BYTES;
			a->weights++;
			break;
		case OPT_TIME:
			a->weight = MF_METRIC_TIME;
			a->weights++;
			break;
		case OPT_LINES:
			a->report.lines = 1;
			break;
		case OPT_THREAD:
			errno = 0;
			a->load.thread = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-')
				return mf_usage_error("--thread '%s': give a thread id (a number)",
						      optarg);
			a->load.have_thread = 1;
			break;
		case OPT_PROCESS:
			if (!optarg[0])
				return mf_usage_error("--process '': give a pid or a program name");
			a->load.process[a->load.nprocess++] = optarg;
			break;
		case OPT_MERGE_PROCESSES:
			a->report.merge_processes = 1;
			break;
		case OPT_DEBUGINFOD:
			a->debuginfod = 1;
			break;
		case OPT_FULL_NAMES:
			a->report.full_names = 1;
			break;
		case OPT_LIST:
			a->mode = MF_MODE_LIST;
			modes++;
			break;
		case OPT_TAGS:
			a->mode = MF_MODE_TAGS;
			modes++;
			break;
		case OPT_SNAPSHOT:
			if (!optarg[0] || !strcmp(optarg, "0"))
				return mf_usage_error("--snapshot '%s': give a snapshot's number "
						      "(from 1) or label",
						      optarg);
			a->load.top = optarg;
			a->windows++;
			snprintf(a->window, sizeof(a->window), "as of snapshot %s",
				 mf_text_escape(optarg, text, sizeof(text)));
			break;
		case OPT_SINCE:
			if (!optarg[0])
				return mf_usage_error(
				    "--since '': give a snapshot's number or label");
			a->windows++;
			if (!strcmp(optarg, "0")) {
				a->load.whole = 1;
				break;
			}
			a->load.base = optarg;
			snprintf(a->window, sizeof(a->window), "since snapshot %s",
				 mf_text_escape(optarg, text, sizeof(text)));
			break;
		case OPT_BETWEEN:
			if (optind >= argc || !optarg[0] || !argv[optind][0] ||
			    !strcmp(optarg, "0") || !strcmp(argv[optind], "0"))
				return mf_usage_error(
				    "--between needs two snapshots (numbers from 1 "
				    "or labels): --between N M");
			a->load.base = optarg;
			a->load.top = argv[optind++];
			a->windows++;
			snprintf(a->window, sizeof(a->window), "after snapshot %s up to snapshot ",
				 mf_text_escape(a->load.base, text, sizeof(text)));
			snprintf(a->window + strlen(a->window),
				 sizeof(a->window) - strlen(a->window), "%s",
				 mf_text_escape(a->load.top, text, sizeof(text)));
			break;
		case OPT_PPROF:
			if (!optarg[0])
				return mf_usage_error("--pprof '': give a file name ('-': stdout)");
			a->pprof = optarg;
			break;
		case 'v':
			a->verbose = 1;
			break;
		case 'h':
			mf_usage(stdout);
			exit(MF_EXIT_OK);
		case 'V':
			printf("mf_print (malloc_freq) %s\n", PACKAGE_VERSION);
			exit(MF_EXIT_OK);
		case ':':
			return mf_usage_error("%s needs a value", argv[optind - 1]);
		default: {
			char why[256];
			return mf_usage_error(
			    "%s",
			    mf_option_error(why, sizeof(why), argv[optind - 1], optopt, opts));
		}
		}
	}
	for (int i = optind; i < argc; i++)
		a->dirs[a->ndirs++] = argv[i];
	if (modes > 1)
		return mf_usage_error(
		    "choose one of --collapsed, --threads, --processes, --json, --dot, --list, "
		    "--tags and --html");
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
		r = mf_snapshot_list(stdout, &found);
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
	if (a.load.resets && !a.windows)
		snprintf(a.window, sizeof(a.window),
			 "since the last malloc_freq_reset of %zu process%s (--since 0: the whole "
			 "run)",
			 a.load.resets, a.load.resets == 1 ? "" : "es");
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
	int chose_nothing = (a.load.have_thread || a.load.nprocess) && !a.load.threads &&
			    a.load.files + a.load.unchosen + a.load.passed > 0;
	if (!r && chose_nothing) {
		mf_nothing_chosen(&a);
		status = MF_EXIT_NOTHING_CHOSEN;
	}
	int lacks_life =
	    (a.report.leaks || a.report.metric >= MF_METRIC_LEAKED_BLOCKS) && !m.has_lifetimes;
	if (base_failed) {
		status = MF_EXIT_INPUT;
	} else if (!r && a.load.threads && a.report.metric == MF_METRIC_TIME && !m.weighted) {
		fprintf(stderr, "mf_print: these profiles hold no time: record with "
				"MALLOC_FREQ_WEIGHT=time for --sort time and --collapsed --time\n");
		status = MF_EXIT_INPUT;
	} else if (!r && a.load.threads && a.report.metric == MF_METRIC_TEMPORARY &&
		   !m.has_leaf_records) {
		fprintf(stderr,
			"mf_print: --%s temporary: these profiles (format 3 or older) do not "
			"record temporaries\n",
			a.mode == MF_MODE_COLLAPSED ? "weight" : "sort");
		status = MF_EXIT_INPUT;
	} else if (!r && a.load.threads && lacks_life) {
		fprintf(stderr,
			"mf_print: %s: these profiles have no lifetimes (record them with "
			"MALLOC_FREQ_LIFETIMES=1)\n",
			a.report.leaks ? "--leaks" : mf_metric_info[a.report.metric].name);
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
	if (a.load.failed || (!a.load.threads && !status && !r))
		status = MF_EXIT_INPUT; /* (what could not be read may be what was asked for) */
out:
	mf_found_free(&found);
	mf_model_free(&m);
	mf_model_free(&base);
	mf_load_free(&a.load);
	if (sym)
		mf_sym_free(sym);
	free(a.dirs);
	free(a.load.process);
	return status;
}
