/* mf_print: options and orchestration only. Reads profile directories, merges, symbolizes,
 * prints one report. Exit 0 ok, 1 some input could not be read (the rest is still reported),
 * 2 usage. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "discover.h"
#include "reader.h"
#include "report.h"
#include "stacks.h"
#include "symbolize.h"

#define MF_PLACEHOLDER_MODULES_MAX 65536

enum mf_mode { MF_MODE_TREE, MF_MODE_COLLAPSED, MF_MODE_THREADS };

struct mf_args {
	enum mf_mode mode;
	struct mf_report_options report;
	int bytes, lines, debuginfod, have_thread, full_names;
	unsigned long long thread;
	char **dirs;
	size_t ndirs;
};

struct mf_input {
	struct mf_profile *profiles;
	size_t count, capacity;
	struct mf_modmap **maps;
	size_t nmaps;
	size_t files, dirs;
	int failed;
};

static void mf_error(const char *what, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "mf_print: %s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void mf_usage(FILE *out)
{
	fputs(
	    "Usage: mf_print [OPTIONS] --dir DIR [--dir DIR]...\n"
	    "       mf_print [OPTIONS] DIR...\n"
	    "Reads the profiles that libmalloc_freq.so wrote to DIR (malloc_freq.<pid>, one\n"
	    "<tid>.prof per thread plus the module map), merges threads and processes,\n"
	    "symbolizes offline (function, file:line, inlined frames, demangled names) and prints\n"
	    "which call stacks call the allocator how often.\n"
	    "\n"
	    "Reports (default: summary and tree):\n"
	    "      (none)            the allocation function at the root, its callers below\n"
	    "  -c, --caller          the tree top-down: outermost caller first\n"
	    "      --collapsed       one line per stack, 'main;f;g;malloc 42', for flamegraph.pl\n"
	    "                        and speedscope\n"
	    "      --threads         calls per thread for each function that calls the allocator\n"
	    "\n"
	    "Options:\n"
	    "  -d, --dir DIR         a profile directory (repeatable); a directory holding\n"
	    "                        malloc_freq.* directories (a fork or exec tree) reads them "
	    "all\n"
	    "  -t, --threshold PCT   fold call paths below PCT percent of the total into one line\n"
	    "                        (default 1.0; 0 shows everything)\n"
	    "  -s, --sort calls|bytes  order and threshold by calls (default) or requested bytes\n"
	    "      --bytes           --collapsed counts bytes instead of calls\n"
	    "      --lines           --collapsed frames carry file:line (the tree always does)\n"
	    "      --thread TID      only the thread(s) with this thread id\n"
	    "      --full-names      C++ names with template arguments and parameter lists\n"
	    "                        (by default std::vector<int>::push_back(int const&) shows\n"
	    "                        as std::vector::push_back)\n"
	    "      --debuginfod      let elfutils fetch missing debug info from DEBUGINFOD_URLS\n"
	    "                        (off by default: mf_print works offline)\n"
	    "  -h, --help            this text\n"
	    "  -V, --version         the version\n"
	    "\n"
	    "Examples:\n"
	    "  LD_PRELOAD=/usr/local/lib/libmalloc_freq.so ./app\n"
	    "  mf_print --dir malloc_freq.1234 --threshold 0.2\n"
	    "  mf_print --dir malloc_freq.1234 --collapsed | flamegraph.pl > flame.svg\n"
	    "  mf_print --threads malloc_freq.1234\n"
	    "\n"
	    "Exit status: 0 ok; 1 a file or directory could not be read (the rest is still\n"
	    "reported); 2 usage error.\n",
	    out);
}

static int mf_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("mf_print: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\nTry 'mf_print --help'.\n", stderr);
	va_end(ap);
	return 2;
}

static int mf_parse_args(int argc, char **argv, struct mf_args *a)
{
	enum {
		OPT_COLLAPSED = 256,
		OPT_THREADS,
		OPT_BYTES,
		OPT_LINES,
		OPT_THREAD,
		OPT_DEBUGINFOD,
		OPT_FULL_NAMES
	};
	static const struct option opts[] = {
	    {"dir", required_argument, NULL, 'd'},
	    {"threshold", required_argument, NULL, 't'},
	    {"sort", required_argument, NULL, 's'},
	    {"caller", no_argument, NULL, 'c'},
	    {"collapsed", no_argument, NULL, OPT_COLLAPSED},
	    {"threads", no_argument, NULL, OPT_THREADS},
	    {"bytes", no_argument, NULL, OPT_BYTES},
	    {"lines", no_argument, NULL, OPT_LINES},
	    {"thread", required_argument, NULL, OPT_THREAD},
	    {"debuginfod", no_argument, NULL, OPT_DEBUGINFOD},
	    {"full-names", no_argument, NULL, OPT_FULL_NAMES},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->report.threshold = 1.0;
	a->dirs = calloc((size_t)argc + 1, sizeof(char *));
	if (!a->dirs)
		return mf_usage_error("out of memory");
	int modes = 0, c;
	char *end;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:t:s:chV", opts, NULL)) != -1) {
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
			if (!strcmp(optarg, "calls"))
				a->report.by_bytes = 0;
			else if (!strcmp(optarg, "bytes"))
				a->report.by_bytes = 1;
			else
				return mf_usage_error("--sort '%s': give 'calls' or 'bytes'",
						      optarg);
			break;
		case 'c':
			a->report.caller_first = 1;
			break;
		case OPT_COLLAPSED:
			a->mode = MF_MODE_COLLAPSED;
			modes++;
			break;
		case OPT_THREADS:
			a->mode = MF_MODE_THREADS;
			modes++;
			break;
		case OPT_BYTES:
			a->bytes = 1;
			break;
		case OPT_LINES:
			a->lines = 1;
			break;
		case OPT_THREAD:
			errno = 0;
			a->thread = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-')
				return mf_usage_error("--thread '%s': give a thread id (a number)",
						      optarg);
			a->have_thread = 1;
			break;
		case OPT_DEBUGINFOD:
			a->debuginfod = 1;
			break;
		case OPT_FULL_NAMES:
			a->full_names = 1;
			break;
		case 'h':
			mf_usage(stdout);
			exit(0);
		case 'V':
			printf("mf_print (malloc_freq) %s\n", PACKAGE_VERSION);
			exit(0);
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
		return mf_usage_error("choose one of --collapsed and --threads");
	if (a->report.caller_first && a->mode != MF_MODE_TREE)
		return mf_usage_error("--caller shapes the tree; it does not go with --collapsed "
				      "or --threads");
	if ((a->bytes || a->lines) && a->mode != MF_MODE_COLLAPSED)
		return mf_usage_error("--bytes and --lines go with --collapsed (the tree shows "
				      "both; use --sort bytes to order it by bytes)");
	if (!a->ndirs)
		return mf_usage_error("no profile directory given (--dir DIR)");
	return 0;
}

/* A map for a directory without a readable one: "[module N]" entries, never opened. */
static int mf_placeholder_map(struct mf_modmap *m, uint32_t need)
{
	if (need <= m->count)
		return 0;
	if (need > MF_PLACEHOLDER_MODULES_MAX)
		return -1;
	struct mf_module *mods = realloc(m->mods, (size_t)need * sizeof(*mods));
	if (!mods)
		return -1;
	for (uint32_t i = m->count; i < need; i++) {
		memset(&mods[i], 0, sizeof(mods[i]));
		snprintf(mods[i].path, sizeof(mods[i].path), "[module %u]", i);
	}
	m->mods = mods;
	m->count = need;
	return 0;
}

static int mf_add_profile(struct mf_input *in, struct mf_profile *p)
{
	struct mf_profile *v = mf_array_room(in->profiles, in->count, &in->capacity, sizeof(*v));
	if (!v)
		return -ENOMEM;
	in->profiles = v;
	in->profiles[in->count++] = *p;
	return 0;
}

/* Reads one malloc_freq.<pid> directory given its sorted .prof names. */
static int mf_read_dir(struct mf_input *in, const struct mf_args *a, const char *dir, char **names,
		       size_t n)
{
	char path[PATH_MAX], err[512];
	struct mf_modmap *map = calloc(1, sizeof(*map));
	struct mf_modmap **maps = realloc(in->maps, (in->nmaps + 1) * sizeof(*maps));
	if (!map || !maps) {
		free(map);
		return -ENOMEM;
	}
	in->maps = maps;
	in->maps[in->nmaps++] = map;
	in->dirs++;
	snprintf(path, sizeof(path), "%s/modules", dir);
	int have_map = mf_read_modules(path, map, err, sizeof(err)) == 0;
	if (!have_map) {
		fprintf(stderr, "mf_print: warning: %s: %s; frames are shown as module+offset\n",
			path, err);
		in->failed |= errno != ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		struct mf_profile p;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		in->files++;
		int r = mf_read_profile(path, &p, err, sizeof(err));
		if (r > 0) {
			fprintf(stderr, "mf_print: warning: %s: %s\n", path, err);
			continue;
		}
		if (r < 0) {
			mf_error(path, "%s", err);
			in->failed = 1;
			continue;
		}
		if (!have_map) {
			uint32_t need = 0;
			for (uint64_t k = 1; k < p.node_count; k++)
				if (p.nodes[k].module < MF_MODULE_MAX && p.nodes[k].module >= need)
					need = p.nodes[k].module + 1;
			if (mf_placeholder_map(map, need)) {
				mf_error(path, "names module %u and there is no module map",
					 need - 1);
				in->failed = 1;
				mf_profile_free(&p);
				continue;
			}
		}
		if (mf_profile_check_modules(&p, map->count, err, sizeof(err))) {
			mf_error(path, "%s", err);
			in->failed = 1;
			mf_profile_free(&p);
			continue;
		}
		p.modules = map;
		if (a->have_thread && p.header.tid != a->thread) {
			mf_profile_free(&p);
			continue;
		}
		if (mf_add_profile(in, &p)) {
			mf_profile_free(&p);
			return -ENOMEM;
		}
	}
	return 0;
}

static void mf_print_warning(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "mf_print: warning: %s\n", msg);
}

int main(int argc, char **argv)
{
	struct mf_args a;
	int r = mf_parse_args(argc, argv, &a);
	if (r) {
		free(a.dirs);
		return r;
	}
	if (!a.debuginfod)
		unsetenv("DEBUGINFOD_URLS");
	struct mf_input in = {0};
	struct mf_stackset set = {0};
	struct mf_symbolizer *sym = mf_sym_new();
	int status = 0;
	if (!sym)
		r = -ENOMEM;
	struct mf_found_list found = {0};
	for (size_t i = 0; r >= 0 && i < a.ndirs; i++) {
		int d = mf_discover(&found, a.dirs[i]);
		in.failed |= d > 0;
		r = d < 0 ? d : 0;
	}
	for (size_t i = 0; !r && i < found.count; i++)
		r = mf_read_dir(&in, &a, found.v[i].dir, found.v[i].profiles, found.v[i].nprofiles);
	mf_found_free(&found);
	if (!r && a.have_thread && !in.count && in.files) {
		fprintf(stderr, "mf_print: no thread with id %llu in the profiles read\n",
			a.thread);
		status = 1;
	}
	if (!r && in.count) {
		enum mf_label_style style =
		    a.mode == MF_MODE_COLLAPSED && !a.lines ? MF_LABEL_FUNCTION : MF_LABEL_LINE;
		r = mf_stacks_build(&set, in.profiles, in.count, sym, style, a.full_names);
		mf_sym_warnings(sym, mf_print_warning, NULL);
		a.report.files = in.files;
		a.report.dirs = in.dirs;
		if (!r && a.mode == MF_MODE_COLLAPSED)
			r = mf_report_collapsed(stdout, &set, a.bytes);
		else if (!r) {
			r = mf_report_summary(stdout, &set, &a.report);
			if (!r)
				r = a.mode == MF_MODE_THREADS
					? mf_report_threads(stdout, &set, &a.report)
					: mf_report_tree(stdout, &set, &a.report);
		}
	}
	if (!r && fflush(stdout))
		r = -errno;
	if (r) {
		fprintf(stderr, "mf_print: %s\n",
			r == -ENOMEM ? "out of memory"
			: r == -EIO  ? "write error"
				     : strerror(-r));
		status = 1;
	}
	if (in.failed || (!in.count && !status && !r))
		status = 1;
	mf_stacks_free(&set);
	for (size_t i = 0; i < in.count; i++)
		mf_profile_free(&in.profiles[i]);
	free(in.profiles);
	for (size_t i = 0; i < in.nmaps; i++) {
		mf_modmap_free(in.maps[i]);
		free(in.maps[i]);
	}
	free(in.maps);
	if (sym)
		mf_sym_free(sym);
	free(a.dirs);
	return status;
}
