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
#include "report.h"
#include "symbolize.h"
#include "text.h"

enum { MF_EXIT_OK, MF_EXIT_INPUT, MF_EXIT_USAGE, MF_EXIT_NOTHING_CHOSEN };

enum mf_mode { MF_MODE_TREE, MF_MODE_COLLAPSED, MF_MODE_THREADS, MF_MODE_PROCESSES };

struct mf_args {
	enum mf_mode mode;
	struct mf_report_options report;
	int caller, debuginfod, verbose;
	int sort, weight; /* enum mf_metric; weight -1: not given */
	struct mf_load load;
	char **dirs;
	size_t ndirs;
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
	    "\n"
	    "Options:\n"
	    "  -d, --dir DIR         a profile directory (repeatable); a directory holding\n"
	    "                        malloc_freq.* directories (a process tree: fork, exec, a\n"
	    "                        build) reads them all\n"
	    "  -t, --threshold PCT   fold call paths below PCT percent of the total into one line\n"
	    "                        (default 1.0; 0 shows everything)\n"
	    "  -s, --sort KEY        order and threshold by KEY: calls (default), bytes\n"
	    "                        (requested), temporary (blocks freed before their thread's\n"
	    "                        next allocation; format 4 profiles), leaked (bytes not\n"
	    "                        freed at the end), peak (bytes live at the process's peak),\n"
	    "                        leaked-blocks, peak-blocks (MALLOC_FREQ_LIFETIMES=1)\n"
	    "      --weight KEY      what --collapsed counts, a --sort KEY (default calls)\n"
	    "      --bytes           --collapsed counts bytes instead of calls (--weight bytes)\n"
	    "      --lines           --collapsed frames carry file:line (the tree always does)\n"
	    "      --thread TID      only the thread(s) with this thread id\n"
	    "      --process PID|NAME  only the processes of this pid or program (repeatable)\n"
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
	    "\n"
	    "Exit status: 0 ok; 1 a file or directory could not be read (the rest is still\n"
	    "reported) or held no profile; 2 usage error; 3 --thread or --process chose nothing.\n",
	    out);
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
		OPT_LEAKS
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
				return mf_usage_error("--sort '%s': give 'calls', 'bytes', "
						      "'temporary', 'leaked', 'leaked-blocks', "
						      "'peak' or 'peak-blocks'",
						      optarg);
			break;
		case OPT_WEIGHT:
			if ((a->weight = mf_metric_named(optarg)) < 0)
				return mf_usage_error("--weight '%s': give 'calls', 'bytes', "
						      "'temporary', 'leaked', 'leaked-blocks', "
						      "'peak' or 'peak-blocks'",
						      optarg);
			break;
		case OPT_HISTOGRAM:
			a->report.histogram = 1;
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
		case OPT_BYTES:
			a->weight = MF_METRIC_BYTES;
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
		default:
			if (optopt)
				return mf_usage_error("unknown option '-%c'", optopt);
			return mf_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	for (int i = optind; i < argc; i++)
		a->dirs[a->ndirs++] = argv[i];
	if (modes > 1)
		return mf_usage_error("choose one of --collapsed, --threads and --processes");
	if (a->caller && a->mode != MF_MODE_TREE)
		return mf_usage_error("--caller shapes the tree; it does not go with --collapsed, "
				      "--threads or --processes");
	if ((a->weight >= 0 || a->report.lines) && a->mode != MF_MODE_COLLAPSED)
		return mf_usage_error("--bytes, --weight and --lines go with --collapsed (the tree "
				      "shows every count; use --sort to order it by one)");
	if ((a->report.histogram || a->report.leaks) && (a->mode != MF_MODE_TREE || a->caller))
		return mf_usage_error("--histogram and --leaks are reports of their own; they do "
				      "not go with --caller, --collapsed, --threads or --processes");
	if (a->report.histogram && a->report.leaks)
		return mf_usage_error("choose one of --histogram and --leaks");
	if (!a->ndirs)
		return mf_usage_error("no profile directory given (--dir DIR)");
	a->report.metric = a->mode == MF_MODE_COLLAPSED
			       ? (a->weight >= 0 ? (enum mf_metric)a->weight : MF_METRIC_CALLS)
			   : a->sort >= 0    ? (enum mf_metric)a->sort
			   : a->report.leaks ? MF_METRIC_LEAKED
					     : MF_METRIC_CALLS;
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

/* The report chosen: after the summary and, with several processes, the programs
 * (--collapsed: alone). */
static int mf_report(const struct mf_model *m, const struct mf_args *a)
{
	if (a->mode == MF_MODE_COLLAPSED)
		return mf_report_collapsed(stdout, m, &a->report);
	int r = mf_report_summary(stdout, m, &a->report);
	if (r)
		return r;
	if (a->mode == MF_MODE_PROCESSES)
		return mf_report_processes(stdout, m, &a->report);
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
	struct mf_model m = {0};
	struct mf_symbolizer *sym = mf_sym_new();
	struct mf_warnings warnings = {.verbose = a.verbose};
	int status = MF_EXIT_OK;
	r = sym ? mf_model_init(&m, sym) : -ENOMEM;
	for (size_t i = 0; !r && i < a.ndirs; i++) {
		int d = mf_discover(&found, a.dirs[i]);
		a.load.failed |= d > 0;
		r = d < 0 ? d : 0;
	}
	for (size_t i = 0; !r && i < found.count; i++)
		r = mf_load_dir(&m, &found.v[i], &a.load);
	if (!r)
		mf_model_link_execs(&m);
	int chose_nothing = (a.load.have_thread || a.load.nprocess) && !a.load.threads &&
			    a.load.files + a.load.unchosen > 0;
	if (!r && chose_nothing) {
		mf_nothing_chosen(&a);
		status = MF_EXIT_NOTHING_CHOSEN;
	}
	int lacks_life = (a.report.leaks || a.report.metric >= MF_METRIC_LEAKED_BLOCKS) &&
			 !m.has_lifetimes;
	if (!r && a.load.threads && a.report.metric == MF_METRIC_TEMPORARY && !m.has_leaf_records) {
		fprintf(stderr, "mf_print: --%s temporary: these profiles (format 3 or older) do not "
				"record temporaries\n",
			a.mode == MF_MODE_COLLAPSED ? "weight" : "sort");
		status = MF_EXIT_INPUT;
	} else if (!r && a.load.threads && lacks_life) {
		fprintf(stderr, "mf_print: %s: these profiles have no lifetimes (record them with "
				"MALLOC_FREQ_LIFETIMES=1)\n",
			a.report.leaks ? "--leaks" : mf_metric_info[a.report.metric].name);
		status = MF_EXIT_INPUT;
	} else if (!r && a.load.threads) {
		mf_sym_warnings(sym, mf_print_warning, &warnings);
		mf_print_nodebug(&warnings);
		a.report.files = a.load.files;
		a.report.dirs = a.load.dirs;
		r = mf_report(&m, &a);
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
	mf_found_free(&found);
	mf_model_free(&m);
	mf_load_free(&a.load);
	if (sym)
		mf_sym_free(sym);
	free(a.dirs);
	free(a.load.process);
	return status;
}
