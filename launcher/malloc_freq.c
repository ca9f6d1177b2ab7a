/* malloc_freq: runs a program with libmalloc_freq.so preloaded, every process of its tree
 * profiled under one directory, then says what was recorded and how to read it. Passes the
 * program's exit status through and dies of the signal that killed it; or, with --attach and
 * --detach, profiles a running process for a while (attach.c). Options become the
 * MALLOC_FREQ_* settings the library reads; it never changes what the library records. */
#include "config.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "option_error.h"
#include "parse.h"
#include "process_end.h"
#include "reader.h"
#include "snapshots.h"
#include "text.h"

/* The launcher's own failures; the program's status otherwise (as env(1) and timeout(1)). */
enum { MF_EXIT_USAGE = 2, MF_EXIT_FAILED = 125, MF_EXIT_CANNOT_RUN = 126, MF_EXIT_NOT_FOUND = 127 };

#define MF_LIB_NAME "libmalloc_freq.so"

struct mf_launch {
	const char *out;    /* -o, or NULL: malloc_freq.<pid> of the child */
	const char *sample; /* the MALLOC_FREQ_* values given, validated; NULL: not given */
	const char *depth;
	const char *seed;
	const char *unwind;
	const char *cache;
	const char *weight;
	const char *snapshot_interval;
	const char *mode;  /* --mode, validated; NULL: not given */
	unsigned dir_mode; /* of the output directory: --mode's, or MALLOC_FREQ_MODE's */
	int start_off, lifetimes;
	int snapshot_signal, toggle_signal; /* 0: not given */
	int report, quiet;
	pid_t attach, detach; /* --attach PID, --detach PID; 0: not given */
	int wait;	      /* --wait: with --attach, detach at SIGINT or SIGTERM */
	char **argv;	      /* the program and its arguments */
	char base[PATH_MAX];  /* without -o: where malloc_freq.<pid> is made */
	char lib[PATH_MAX];
	char print[PATH_MAX]; /* mf_print to run and to name */
};

static void mf_usage(FILE *out)
{
	fputs("Usage: malloc_freq [OPTIONS] [--] PROGRAM [ARGS]...\n"
	      "       malloc_freq --attach PID [--wait] [OPTIONS]\n"
	      "       malloc_freq --detach PID\n"
	      "Runs PROGRAM with libmalloc_freq.so preloaded: every call to malloc and its\n"
	      "eight siblings is counted by call stack, in PROGRAM and in every process it\n"
	      "starts (fork, exec, shell scripts, builds), with no rebuild. When PROGRAM ends,\n"
	      "one line on stderr says how many calls and bytes were recorded in how many\n"
	      "processes and threads, and the next the mf_print command that reports them.\n"
	      "The exit status is PROGRAM's; killed by a signal, malloc_freq dies of the same\n"
	      "signal.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output DIR      put the profiles of every process in DIR (made if\n"
	      "                        missing; it must be empty). Default: malloc_freq.<pid>\n"
	      "                        in the current directory, <pid> being PROGRAM's\n"
	      "  -r, --report          run mf_print on DIR when PROGRAM ends (to stdout)\n"
	      "  -s, --sample N        record on average one call in N (1 to 1000000000);\n"
	      "                        mf_print reports estimates  [MALLOC_FREQ_SAMPLE]\n"
	      "      --seed N          seed of the sampling, for reproducible runs\n"
	      "                        [MALLOC_FREQ_SEED]\n"
	      "  -d, --depth N         frames kept per stack, 1 to 1024 (default 128); deeper\n"
	      "                        stacks keep their innermost frames  [MALLOC_FREQ_DEPTH]\n"
	      "      --unwind MODE     cached (default), libunwind or check\n"
	      "                        [MALLOC_FREQ_UNWIND]\n"
	      "      --cache DIR|off   the unwinder's rule cache (an absolute path), or off\n"
	      "                        [MALLOC_FREQ_CACHE]\n"
	      "      --weight calls|time  weigh stacks by calls (default) or by the thread's\n"
	      "                        CPU time before each call  [MALLOC_FREQ_WEIGHT]\n"
	      "      --lifetimes       match every free to its allocation: leaks and the peak\n"
	      "                        per stack (with --sample, of the sampled blocks, scaled)\n"
	      "                        [MALLOC_FREQ_LIFETIMES=1]\n"
	      "      --start-off       record nothing until the program (malloc_freq_enable)\n"
	      "                        or the toggle signal turns recording on\n"
	      "                        [MALLOC_FREQ_START=off]\n"
	      "      --snapshot-signal SIG  a snapshot of every thread's counts when a process\n"
	      "                        gets SIG (USR1, USR2, RTMIN+N, a number; not KILL,\n"
	      "                        STOP, nor a fault's: SEGV, BUS, FPE, ILL, TRAP, SYS;\n"
	      "                        nor 32 or 33, glibc's own)\n"
	      "                        [MALLOC_FREQ_SNAPSHOT_SIGNAL]\n"
	      "      --toggle-signal SIG  recording off and on again at each SIG\n"
	      "                        [MALLOC_FREQ_TOGGLE_SIGNAL]\n"
	      "      --snapshot-interval SECS  a snapshot every SECS seconds (0.001 to 86400,\n"
	      "                        three decimals at most)\n"
	      "                        [MALLOC_FREQ_SNAPSHOT_INTERVAL]\n"
	      "      --mode MODE       the profile's files' mode: 600 (default: for their\n"
	      "                        owner only), 640 or 644 (readable by the group, or\n"
	      "                        by all); directories get search where read\n"
	      "                        [MALLOC_FREQ_MODE]\n"
	      "      --attach PID      profile the running process PID from now on (with\n"
	      "                        gdb; dynamically linked; this user's, or as root),\n"
	      "                        into DIR (-o) or malloc_freq.PID; no signal options,\n"
	      "                        no --report without --wait\n"
	      "      --wait            with --attach: stay until ^C (SIGINT) or SIGTERM, then\n"
	      "                        detach; or until the process ends; then the summary\n"
	      "                        (and --report's report)\n"
	      "      --detach PID      stop recording in PID, attached to before: it goes on\n"
	      "                        with its allocator, the files final; the summary (and\n"
	      "                        --report's report)\n"
	      "  -q, --quiet           no summary at the end (a run that recorded nothing\n"
	      "                        is still said)\n"
	      "  -h, --help            this text\n"
	      "  -V, --version         the version\n"
	      "The variable each option sets is in brackets; -o sets MALLOC_FREQ_DIR. A\n"
	      "setting already in the environment is kept unless an option gives it; without\n"
	      "-o, the output directory malloc_freq.<pid> is made in MALLOC_FREQ_DIR if it is\n"
	      "set, else in the current directory. The directory the profiles are made in\n"
	      "must be this user's or root's, and others may write in it only if it is sticky.\n"
	      "The snapshot and toggle signals sent to malloc_freq are passed on to PROGRAM\n"
	      "(to reach the processes it starts, send them to those).\n"
	      "\n"
	      "Examples:\n"
	      "  malloc_freq ./app --its-args          profile in malloc_freq.<pid>/\n"
	      "  malloc_freq -o prof make -j8          a whole build: every process under prof/\n"
	      "  malloc_freq --report -s 100 ./app     one call in 100, then the report\n"
	      "  mf_print --threshold 0.2 prof         the tree of a profile, at any later time\n"
	      "  mf_print --processes prof             every process, and how it ended\n"
	      "  mf_print --html prof.html prof        the flame graph, one page for a browser\n"
	      "  malloc_freq --attach 4242 -o prof     a running server, from now on ...\n"
	      "  malloc_freq --detach 4242             ... until now; it runs on\n"
	      "  malloc_freq --attach 4242 --wait      the same, until ^C\n"
	      "  malloc_freq --snapshot-signal USR1 -o prof ./server &\n"
	      "  kill -USR1 $!; mf_print --list prof   a snapshot of the running server (once\n"
	      "                                        prof/ is there: malloc_freq is up)\n"
	      "\n"
	      "Exit status: PROGRAM's; 2 usage error; 125 malloc_freq could not start PROGRAM\n"
	      "(no library, an output directory not empty or another user's), or could not\n"
	      "attach or detach (said why); 126 PROGRAM cannot be run; 127 PROGRAM was not\n"
	      "found. --attach and --detach: 0 when done.\n",
	      out);
}

/* "malloc_freq: " and the message, on stderr, then end */
static void mf_vsay(const char *end, const char *fmt, va_list ap)
{
	fputs("malloc_freq: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(end, stderr);
}

static int mf_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mf_vsay("\nTry 'malloc_freq --help'.\n", fmt, ap);
	va_end(ap);
	return MF_EXIT_USAGE;
}

void mf_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mf_vsay("\n", fmt, ap);
	va_end(ap);
}

/* s a whole number from min to max, as the library reads it (lib/parse.c). */
static int mf_number(const char *s, unsigned long min, unsigned long max)
{
	unsigned long v;
	return mf_parse_uint(s, min, max, &v) == 0;
}

static int mf_parse_args(int argc, char **argv, struct mf_launch *l)
{
	enum {
		OPT_SEED = 256,
		OPT_UNWIND,
		OPT_CACHE,
		OPT_WEIGHT,
		OPT_START_OFF,
		OPT_LIFETIMES,
		OPT_SNAPSHOT_SIGNAL,
		OPT_TOGGLE_SIGNAL,
		OPT_SNAPSHOT_INTERVAL,
		OPT_MODE,
		OPT_ATTACH,
		OPT_DETACH,
		OPT_WAIT
	};
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"report", no_argument, NULL, 'r'},
	    {"sample", required_argument, NULL, 's'},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"depth", required_argument, NULL, 'd'},
	    {"unwind", required_argument, NULL, OPT_UNWIND},
	    {"cache", required_argument, NULL, OPT_CACHE},
	    {"weight", required_argument, NULL, OPT_WEIGHT},
	    {"start-off", no_argument, NULL, OPT_START_OFF},
	    {"lifetimes", no_argument, NULL, OPT_LIFETIMES},
	    {"snapshot-signal", required_argument, NULL, OPT_SNAPSHOT_SIGNAL},
	    {"toggle-signal", required_argument, NULL, OPT_TOGGLE_SIGNAL},
	    {"snapshot-interval", required_argument, NULL, OPT_SNAPSHOT_INTERVAL},
	    {"mode", required_argument, NULL, OPT_MODE},
	    {"attach", required_argument, NULL, OPT_ATTACH},
	    {"detach", required_argument, NULL, OPT_DETACH},
	    {"wait", no_argument, NULL, OPT_WAIT},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0;
	/* '+': the first word that is not an option is the program; its options are its own. */
	while ((c = getopt_long(argc, argv, "+:o:rs:d:qhV", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!optarg[0])
				return mf_usage_error("--output '': give a directory");
			l->out = optarg;
			break;
		case 'r':
			l->report = 1;
			break;
		case 's':
			if (!mf_number(optarg, 1, 1000000000))
				return mf_usage_error(
				    "--sample '%s': give a whole number from 1 to 1000000000",
				    optarg);
			l->sample = optarg;
			break;
		case OPT_SEED:
			if (!mf_number(optarg, 0, ULONG_MAX))
				return mf_usage_error("--seed '%s': give a whole number", optarg);
			l->seed = optarg;
			break;
		case 'd':
			if (!mf_number(optarg, 1, 1024))
				return mf_usage_error(
				    "--depth '%s': give a whole number from 1 to 1024", optarg);
			l->depth = optarg;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "cached") && strcmp(optarg, "libunwind") &&
			    strcmp(optarg, "check"))
				return mf_usage_error(
				    "--unwind '%s': give cached, libunwind or check", optarg);
			l->unwind = optarg;
			break;
		case OPT_CACHE:
			if (strcmp(optarg, "off") && optarg[0] != '/')
				return mf_usage_error("--cache '%s': give an absolute path, or off",
						      optarg);
			l->cache = optarg;
			break;
		case OPT_WEIGHT:
			if (strcmp(optarg, "calls") && strcmp(optarg, "time"))
				return mf_usage_error("--weight '%s': give calls or time", optarg);
			l->weight = optarg;
			break;
		case OPT_START_OFF:
			l->start_off = 1;
			break;
		case OPT_LIFETIMES:
			l->lifetimes = 1;
			break;
		case OPT_SNAPSHOT_SIGNAL:
		case OPT_TOGGLE_SIGNAL:
			if (!(*(c == OPT_SNAPSHOT_SIGNAL ? &l->snapshot_signal
							 : &l->toggle_signal) =
				  mf_parse_signal(optarg)))
				return mf_usage_error(
				    "%s '%s': give a signal a handler may take (USR1, "
				    "USR2, RTMIN+N, a number; not KILL, STOP, nor a fault's: "
				    "SEGV, BUS, FPE, ILL, TRAP, SYS; nor 32 or 33, glibc's own)",
				    c == OPT_SNAPSHOT_SIGNAL ? "--snapshot-signal"
							     : "--toggle-signal",
				    optarg);
			break;
		case OPT_SNAPSHOT_INTERVAL:
			if (!mf_parse_ms(optarg))
				return mf_usage_error(
				    "--snapshot-interval '%s': give seconds from 0.001 "
				    "to 86400, three decimals at most",
				    optarg);
			l->snapshot_interval = optarg;
			break;
		case OPT_MODE:
			if (mf_parse_mode(optarg) < 0)
				return mf_usage_error(
				    "--mode '%s': give 600, 640 or 644 (the owner "
				    "reads and writes, others at most read)",
				    optarg);
			l->mode = optarg;
			break;
		case OPT_ATTACH:
		case OPT_DETACH:
			if (!mf_number(optarg, 1, INT_MAX))
				return mf_usage_error("%s '%s': give a process id",
						      c == OPT_ATTACH ? "--attach" : "--detach",
						      optarg);
			*(c == OPT_ATTACH ? &l->attach : &l->detach) = (pid_t)atoi(optarg);
			break;
		case OPT_WAIT:
			l->wait = 1;
			break;
		case 'q':
			l->quiet = 1;
			break;
		case 'h':
			mf_usage(stdout);
			exit(0);
		case 'V':
			printf("malloc_freq %s\n", PACKAGE_VERSION);
			exit(0);
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
	if (l->snapshot_signal && l->snapshot_signal == l->toggle_signal)
		return mf_usage_error("--snapshot-signal and --toggle-signal name the same signal");
	if ((l->attach || l->detach) && optind < argc)
		return mf_usage_error("%s takes no program: it profiles a running process",
				      l->attach ? "--attach" : "--detach");
	if (l->attach && l->detach)
		return mf_usage_error("--attach and --detach: give one");
	if (l->wait && !l->attach)
		return mf_usage_error("--wait goes with --attach");
	if (l->attach && (l->snapshot_signal || l->toggle_signal || (l->report && !l->wait)))
		return mf_usage_error("--attach: no %s (%s)",
				      l->report ? "--report" : "signal options",
				      l->report ? "the process goes on; --detach --report reports, "
						  "or --attach --wait --report"
						: "the program's own signals are left as they are");
	if (l->detach && (l->out || l->sample || l->seed || l->depth || l->unwind || l->cache ||
			  l->weight || l->start_off || l->lifetimes || l->snapshot_signal ||
			  l->toggle_signal || l->snapshot_interval || l->mode))
		return mf_usage_error("--detach takes only --report and --quiet");
	if (l->attach || l->detach)
		return 0;
	if (optind >= argc)
		return mf_usage_error("no program given");
	l->argv = argv + optind;
	return 0;
}

static int mf_is_file(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The library and mf_print: those of the build tree when this is the build tree's launcher
 * (launcher/malloc_freq beside lib/.libs/), so that tests and a build run uninstalled;
 * else those installed with it. 0, or -1 after saying which paths were tried. */
static int mf_locate_tools(struct mf_launch *l)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		*slash = 0;
		snprintf(path, sizeof(path), "%s/../lib/.libs/" MF_LIB_NAME, self);
		if (mf_is_file(path) && realpath(path, l->lib)) {
			snprintf(path, sizeof(path), "%s/../mf_print/mf_print", self);
			if (!realpath(path, l->print))
				strcpy(l->print, "mf_print");
			return 0;
		}
	}
	snprintf(path, sizeof(path), "%s/" MF_LIB_NAME, MF_LIBDIR);
	if (!mf_is_file(path)) {
		mf_say("cannot find %s: not at %s, and this malloc_freq is not in a build tree "
		       "(../lib/.libs/ beside it); run 'make install', or the launcher of the "
		       "build tree",
		       MF_LIB_NAME, path);
		return -1;
	}
	strcpy(l->lib, path);
	snprintf(path, sizeof(path), "%s/mf_print", MF_BINDIR);
	strcpy(l->print, mf_is_file(path) ? path : "mf_print");
	return 0;
}

/* mf_locate_tools, and a library LD_PRELOAD can name. */
static int mf_find_tools(struct mf_launch *l)
{
	if (mf_locate_tools(l))
		return -1;
	/* (the loader splits LD_PRELOAD at spaces and colons: the halves would be looked for) */
	if (strpbrk(l->lib, " \t:")) {
		mf_say("the library's path has a space or a colon, which LD_PRELOAD cannot hold: "
		       "%s; build or install it where the path has neither",
		       l->lib);
		return -1;
	}
	return 0;
}

/* LD_PRELOAD with the library first (the program's calls must reach it before another
 * preloaded allocator's), the entries already there kept after it. NULL: out of memory. */
static char *mf_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *v = malloc(len), *copy = old ? strdup(old) : NULL;
	if (!v || (old && !copy)) {
		free(v);
		free(copy);
		return NULL;
	}
	strcpy(v, lib);
	/* Entries are separated by spaces or colons; the library is not named twice. */
	for (char *save, *e = copy ? strtok_r(copy, ": ", &save) : NULL; e;
	     e = strtok_r(NULL, ": ", &save)) {
		if (!strcmp(e, lib))
			continue;
		strcat(v, " ");
		strcat(v, e);
	}
	free(copy);
	return v;
}

/* Whether dir, where profiles are to be made, keeps them from other users (parse.h:
 * mf_dir_unsafe). 0, or -1 after saying why not, and then what to do. */
static int mf_check_dir(const char *dir, const char *then)
{
	struct stat st;
	char why[256];
	if (stat(dir, &st) || !mf_dir_unsafe(&st, geteuid(), getegid(), why, sizeof(why)))
		return 0; /* (one that cannot be used is said when it is used) */
	mf_say("%s: %s; %s", dir, why, then);
	return -1;
}

/* Makes dir (and the directories it lies in, as mkdir -p) of mode mode, or takes it as it is
 * when it exists empty and keeps the profiles from other users. 1 when made, 0 when taken,
 * or -1 after saying why not. */
static int mf_make_out(const char *dir, unsigned mode)
{
	char up[PATH_MAX];
	snprintf(up, sizeof(up), "%s", dir);
	for (char *slash = strchr(up + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		(void)mkdir(up, 0777); /* (one that cannot be made fails the last mkdir) */
		*slash = '/';
	}
	if (!mkdir(dir, mode))
		return 1;
	int err = errno;
	if (err == EEXIST && mf_check_dir(dir, "give -o a directory of your own"))
		return -1;
	DIR *d = err == EEXIST ? opendir(dir) : NULL;
	if (!d) {
		mf_say("%s: cannot make the output directory: %s", dir,
		       strerror(err == EEXIST ? errno : err));
		return -1;
	}
	struct dirent *e;
	int empty = 1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(d);
	if (!empty) {
		mf_say("%s is not empty: this run's profiles would mix with what is there; remove "
		       "it or give another -o",
		       dir);
		return -1;
	}
	return 0;
}

/* Without -o: the directory malloc_freq.<pid> is made in, l->base: MALLOC_FREQ_DIR (taken
 * from here if relative, as the library takes it), else here. 0, or -1 after saying that it
 * does not keep the profiles from other users. */
static int mf_default_base(struct mf_launch *l)
{
	const char *in = getenv("MALLOC_FREQ_DIR");
	if (!getcwd(l->base, sizeof(l->base)))
		strcpy(l->base, ".");
	if (in && in[0] == '/')
		snprintf(l->base, sizeof(l->base), "%s", in);
	else if (in && in[0] && strlen(l->base) + strlen(in) + 2 < sizeof(l->base))
		strcat(strcat(l->base, "/"), in);
	return mf_check_dir(l->base, in && in[0]
					 ? "give MALLOC_FREQ_DIR or -o a directory of your own"
					 : "run it in a directory of your own, or give -o one");
}

/* SIGINT's and SIGQUIT's dispositions as the launcher found them: its children get them
 * back (a launcher started with them ignored, in the background, leaves them ignored). */
static struct sigaction mf_old_int, mf_old_quit;
/* The signal mask as the launcher found it: the signals it passes on are blocked from before
 * its start until their handlers are in place, so that one sent meanwhile waits instead of killing
 * the launcher. */
static sigset_t mf_old_mask;

static void mf_restore_signals(void)
{
	sigaction(SIGINT, &mf_old_int, NULL);
	sigaction(SIGQUIT, &mf_old_quit, NULL);
	sigprocmask(SIG_SETMASK, &mf_old_mask, NULL);
}

/* What the child tells the parent through the pipe, before exec and if exec fails. */
struct mf_child_msg {
	int stage; /* 0: the directory made; 1: exec failed */
	int err;
	char dir[PATH_MAX];
};

/* The default output directory of process pid in base, its n-th if the first ones are taken
 * (.1, .2 ... as the library names its own): 1, or 0 when it does not fit. */
static int mf_out_name(char *out, size_t size, const char *base, pid_t pid, int n)
{
	int len = n ? snprintf(out, size, "%s/malloc_freq.%d.%d", base, (int)pid, n)
		    : snprintf(out, size, "%s/malloc_freq.%d", base, (int)pid);
	if (len < 0 || (size_t)len >= size) {
		errno = ENAMETOOLONG;
		return 0;
	}
	return 1;
}

/* The MALLOC_FREQ_* settings the options give, each passed to set (dir: MALLOC_FREQ_DIR). */
static void mf_settings(const struct mf_launch *l, const char *dir,
			void (*set)(const char *, const char *, void *), void *arg)
{
	set("MALLOC_FREQ_DIR", dir, arg);
	if (l->sample)
		set("MALLOC_FREQ_SAMPLE", l->sample, arg);
	if (l->seed)
		set("MALLOC_FREQ_SEED", l->seed, arg);
	if (l->depth)
		set("MALLOC_FREQ_DEPTH", l->depth, arg);
	if (l->unwind)
		set("MALLOC_FREQ_UNWIND", l->unwind, arg);
	if (l->cache)
		set("MALLOC_FREQ_CACHE", l->cache, arg);
	if (l->weight)
		set("MALLOC_FREQ_WEIGHT", l->weight, arg);
	if (l->start_off)
		set("MALLOC_FREQ_START", "off", arg);
	if (l->lifetimes)
		set("MALLOC_FREQ_LIFETIMES", "1", arg);
	char num[16];
	if (l->snapshot_signal) {
		snprintf(num, sizeof(num), "%d", l->snapshot_signal);
		set("MALLOC_FREQ_SNAPSHOT_SIGNAL", num, arg);
	}
	if (l->toggle_signal) {
		snprintf(num, sizeof(num), "%d", l->toggle_signal);
		set("MALLOC_FREQ_TOGGLE_SIGNAL", num, arg);
	}
	if (l->snapshot_interval)
		set("MALLOC_FREQ_SNAPSHOT_INTERVAL", l->snapshot_interval, arg);
	if (l->mode)
		set("MALLOC_FREQ_MODE", l->mode, arg);
}

static void mf_setenv(const char *name, const char *value, void *arg)
{
	(void)arg;
	setenv(name, value, 1);
}

const char *mf_pages_unfit(void)
{
	static char why[128];
	if (getpagesize() == MF_PAGE_SIZE)
		return NULL;
	snprintf(why, sizeof(why),
		 "this kernel's pages are %d bytes, and the profiler works only with %u-byte pages",
		 getpagesize(), MF_PAGE_SIZE);
	return why;
}

/* In the child: the output directory (the default one named after this process, with
 * .1, .2 ... when it is taken, as the library names its own), the settings, exec. */
static void mf_child(struct mf_launch *l, const char *preload, int fd)
{
	struct mf_child_msg msg = {0};
	if (!l->out) {
		for (int n = 0;; n++) {
			if (mf_out_name(msg.dir, sizeof(msg.dir), l->base, getpid(), n) &&
			    !mkdir(msg.dir, l->dir_mode))
				break;
			if (errno != EEXIST || n == 1000) {
				msg.stage = 0, msg.err = errno;
				msg.dir[0] = 0;
				if (write(fd, &msg, sizeof(msg)) < 0) {
				}
				_exit(MF_EXIT_FAILED);
			}
		}
	} else if (!realpath(l->out, msg.dir)) {
		snprintf(msg.dir, sizeof(msg.dir), "%s", l->out);
	}
	if (write(fd, &msg, sizeof(msg)) < 0) {
	}
	if (!mf_pages_unfit()) /* (else it would record nothing: said at start) */
		setenv("LD_PRELOAD", preload, 1);
	mf_settings(l, msg.dir, mf_setenv, NULL);
	mf_restore_signals();
	execvp(l->argv[0], l->argv);
	msg.stage = 1, msg.err = errno;
	if (write(fd, &msg, sizeof(msg)) < 0) {
	}
	_exit(msg.err == ENOENT ? MF_EXIT_NOT_FOUND : MF_EXIT_CANNOT_RUN);
}

static pid_t mf_child_pid;
/* The snapshot and toggle signals, and those of them held (mf_forward) */
static int mf_held_sigs[2];
static volatile sig_atomic_t mf_held[2];

/* Does process pid catch sig (its SigCgt)? 1, 0, or -1 when that cannot be read (it ended). */
static int mf_catches(pid_t pid, int sig)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *at = strstr(buf, "\nSigCgt:");
	if (!at)
		return -1;
	return (int)(strtoull(at + 8, NULL, 16) >> (sig - 1) & 1);
}

/* A termination request to the launcher is the program's to act on; so are the snapshot
 * and toggle signals, held until the program catches them: sent before the library (in the
 * program's constructors) put its handler there, one would kill it. */
static void mf_forward(int sig)
{
	int saved = errno;
	for (int i = 0; i < 2; i++)
		if (sig == mf_held_sigs[i] && mf_child_pid > 0 &&
		    mf_catches(mf_child_pid, sig) == 0) {
			mf_held[i] = 1;
			errno = saved;
			return;
		}
	if (mf_child_pid > 0)
		kill(mf_child_pid, sig);
	errno = saved;
}

/* The held signals, passed on once the program catches them, or after 2 s without (a program
 * the library is not in: they are then as they would be without the launcher). Returns
 * whether some are still held. */
static int mf_pass_held(pid_t child, int waited_ms)
{
	int held = 0;
	for (int i = 0; i < 2; i++) {
		if (!mf_held[i])
			continue;
		if (mf_catches(child, mf_held_sigs[i]) != 0 || waited_ms >= 2000) {
			mf_held[i] = 0;
			kill(child, mf_held_sigs[i]);
		} else {
			held = 1;
		}
	}
	return held;
}

/* What the profiles of dir hold, from their headers: no symbolization. */
struct mf_totals {
	uint64_t calls, bytes;
	size_t threads, processes, unreadable;
	int sampled, saturated; /* (a sum held at UINT64_MAX) */
	int reset;		/* a process called malloc_freq_reset */
};

static uint64_t mf_add(uint64_t a, uint64_t b, int *flag)
{
	uint64_t r;
	if (__builtin_add_overflow(a, b, &r)) {
		*flag = 1;
		return UINT64_MAX;
	}
	return r;
}

/* Adds one thread file to t; 1 when it held a profile. */
static int mf_count_profile(const char *path, struct mf_totals *t)
{
	struct mf_profile p;
	char err[256];
	int r = mf_read_profile(path, &p, err, sizeof(err));
	if (r) {
		t->unreadable += r < 0;
		return 0;
	}
	uint64_t rate = p.header.sample_rate ? p.header.sample_rate : 1;
	t->sampled |= rate > 1;
	/* a call is counted at its leaf, the entry point's node; records follow some nodes */
	for (uint64_t i = 1; i < p.node_count; i += 1 + mf_profile_slots_after(&p, &p.nodes[i])) {
		if (p.nodes[i].module != MF_MODULE_ENTRY)
			continue;
		uint64_t c, b;
		if (__builtin_mul_overflow(p.nodes[i].calls, rate, &c))
			c = UINT64_MAX, t->saturated = 1;
		if (__builtin_mul_overflow(p.nodes[i].bytes, rate, &b))
			b = UINT64_MAX, t->saturated = 1;
		t->calls = mf_add(t->calls, c, &t->saturated);
		t->bytes = mf_add(t->bytes, b, &t->saturated);
	}
	t->threads++;
	mf_profile_free(&p);
	return 1;
}

/* Sums the thread files of every malloc_freq.* directory in dir; each directory with one is a
 * process (an image: one that exec'd is two, as mf_print counts them). */
static void mf_count(const char *dir, struct mf_totals *t)
{
	DIR *d = opendir(dir);
	struct dirent *e, *f;
	char path[PATH_MAX * 2];
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "malloc_freq.", 12))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		char snap[256], err[512];
		struct mf_snapshot_record rec;
		t->reset |=
		    !mf_snapshot_last_reset(path, snap, sizeof(snap), &rec, err, sizeof(err));
		DIR *sub = opendir(path);
		int any = 0;
		while (sub && (f = readdir(sub))) {
			size_t len = strlen(f->d_name);
			if (len <= 5 || strcmp(f->d_name + len - 5, ".prof"))
				continue;
			snprintf(path, sizeof(path), "%s/%s/%s", dir, e->d_name, f->d_name);
			any |= mf_count_profile(path, t);
		}
		t->processes += any;
		if (sub)
			closedir(sub);
	}
	if (d)
		closedir(d);
}

/* s as one shell word: as it is when it has nothing the shell would act on, else quoted. */
static void mf_shell_word(FILE *out, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			    "_-./+,:=@%") == strlen(s)) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	fputc('\'', out);
}

/* Is prog (found as execvp finds it, its path in path) a statically linked ELF program: one
 * with no program interpreter, which no dynamic loader, and so no LD_PRELOAD, ever enters? */
static int mf_static_program(const char *prog, char *path, size_t size)
{
	const char *dirs = strchr(prog, '/') ? "" : getenv("PATH");
	if (!dirs)
		dirs = "/bin:/usr/bin"; /* (execvp's when PATH is not set) */
	for (;;) {
		size_t len = strcspn(dirs, ":");
		/* (an empty entry of PATH: the current directory) */
		snprintf(path, size, "%.*s%s%s", (int)len, dirs, len ? "/" : "", prog);
		if (mf_is_file(path) && !access(path, X_OK))
			break;
		if (!dirs[len])
			return 0;
		dirs += len + 1;
	}
	return mf_attach_elf_static(path);
}

static void mf_summary(const struct mf_launch *l, const char *dir)
{
	struct mf_totals t = {0};
	char bytes[32];
	mf_count(dir, &t);
	mf_text_bytes(bytes, sizeof(bytes), t.bytes);
	const char *about = t.sampled ? "~" : "", *sat = t.calls == UINT64_MAX ? ">=" : "";
	char path[PATH_MAX];
	if (!t.threads && l->argv && mf_static_program(l->argv[0], path, sizeof(path)))
		fprintf(stderr,
			"malloc_freq: nothing recorded in %s: %s is statically linked, and the "
			"profiler cannot be preloaded into it (only a dynamically linked program's "
			"loader reads LD_PRELOAD)\n",
			dir, path);
	else if (!t.threads && mf_pages_unfit())
		fprintf(stderr, "malloc_freq: nothing recorded in %s: %s\n", dir, mf_pages_unfit());
	else if (!t.threads)
		fprintf(stderr,
			"malloc_freq: nothing recorded in %s: no process of the program called the "
			"allocator under the profiler (one that does not allocate, or a static or "
			"setuid program, or one started without LD_PRELOAD, leaves nothing)\n",
			dir);
	if (l->quiet) /* (a run that recorded nothing is said still: something is wrong) */
		return;
	if (t.threads)
		fprintf(stderr,
			"malloc_freq: %s%s%" PRIu64 " calls, %s requested; %zu process%s, %zu "
			"thread%s%s%s\n",
			about, sat, t.calls, bytes, t.processes, t.processes == 1 ? "" : "es",
			t.threads, t.threads == 1 ? "" : "s",
			t.sampled ? " (sampled: estimates)" : "",
			t.unreadable ? " (some files could not be read: mf_print says which)" : "");
	if (t.threads && t.reset)
		fprintf(stderr, "malloc_freq: these are the whole run's counts: the program called "
				"malloc_freq_reset, and mf_print counts from each process's last "
				"reset (--since 0: the whole run)\n");
	fputs("malloc_freq: report: ", stderr);
	mf_shell_word(stderr, l->print);
	fputc(' ', stderr);
	mf_shell_word(stderr, dir);
	fputc('\n', stderr);
}

/* Runs mf_print on dir, the report to stdout. */
static void mf_run_report(const struct mf_launch *l, const char *dir)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		mf_restore_signals();
		execlp(l->print, l->print, dir, (char *)NULL);
		mf_say("cannot run %s: %s", l->print, strerror(errno));
		_exit(MF_EXIT_CANNOT_RUN);
	}
	int st;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
}

/* Whether the launcher's own core can go where it replaces no core of the program's (a
 * core_pattern of a pipe; of a file named by the pid or the program, or relative: the core
 * then goes in dir, the output directory, where the launcher moves, unless it is where the
 * program started, and its core went). */
static int mf_core_apart(const char *dir)
{
	struct stat here, there;
	char pattern[256] = "core", uses_pid[8] = "0";
	FILE *f = fopen("/proc/sys/kernel/core_pattern", "re");
	if (f && !fgets(pattern, sizeof(pattern), f))
		strcpy(pattern, "core");
	if (f)
		fclose(f);
	if ((f = fopen("/proc/sys/kernel/core_uses_pid", "re"))) {
		if (!fgets(uses_pid, sizeof(uses_pid), f))
			strcpy(uses_pid, "0");
		fclose(f);
	}
	if (pattern[0] == '|')
		return 1;
	if (pattern[0] != '/')
		return dir && !stat(".", &here) && !stat(dir, &there) &&
		       (here.st_dev != there.st_dev || here.st_ino != there.st_ino) && !chdir(dir);
	int pid = uses_pid[0] == '1' && !strstr(pattern, "%p");
	for (const char *p = pattern; (p = strchr(p, '%')) && p[1]; p += 2)
		pid |= strchr("pPiIeE", p[1]) != NULL;
	return pid;
}

/* Ends as the program ended: its exit status, or its death by the same signal. A parent sees
 * "core dumped" only where the kernel wrote a core: when the program's was, the launcher
 * dumps one too, of none of its memory (coredump_filter 0), its core limit as it was, where
 * it replaces none of the program's (mf_core_apart; else it dumps none). When the program's
 * was not, no core (a parent must not see one the program did not dump). */
static int mf_pass_status(int st, const char *dir)
{
	if (!WIFSIGNALED(st))
		return WEXITSTATUS(st);
	int sig = WTERMSIG(st), core = WCOREDUMP(st) && mf_core_apart(dir);
	struct rlimit none = {0, 0};
	if (!core)
		setrlimit(RLIMIT_CORE, &none);
	FILE *filter = core ? fopen("/proc/self/coredump_filter", "we") : NULL;
	if (filter) {
		fputs("0", filter);
		fclose(filter);
	}
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	fflush(NULL);
	raise(sig);
	return 128 + sig; /* (a signal whose default is not to end the process) */
}

/* The settings for a process attached to: the launcher's MALLOC_FREQ_* environment, then
 * the options' (as a child started here would have them), "NAME=VALUE" each. */
struct mf_env_list {
	char *v[40];
	int n;
};

static void mf_env_put(const char *name, const char *value, void *arg)
{
	struct mf_env_list *e = arg;
	size_t len = strlen(name);
	char *one = malloc(len + strlen(value) + 2);
	if (!one)
		return;
	sprintf(one, "%s=%s", name, value);
	for (int i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], name, len) && e->v[i][len] == '=') {
			free(e->v[i]);
			e->v[i] = one;
			return;
		}
	if (e->n < (int)(sizeof(e->v) / sizeof(e->v[0])) - 1)
		e->v[e->n++] = one;
	else
		free(one);
}

extern char **environ;

/* What recording stopped in process pid left: the summary of the output directory (dir, the
 * process directory, is cut to it), and with --report the report; how: "detached from". */
static void mf_detached_summary(const struct mf_launch *l, pid_t pid, char *dir, const char *how)
{
	char *slash = strrchr(dir, '/'); /* (the output directory: the process's lies in it) */
	if (slash && slash != dir)
		*slash = 0;
	struct mf_totals t = {0};
	if (dir[0])
		mf_count(dir, &t);
	if (!t.threads) { /* (its directory, made at the attach, holds no thread's file) */
		fprintf(stderr,
			"malloc_freq: %s process %d, which made no call while attached: "
			"nothing was recorded\n",
			how, (int)pid);
		return;
	}
	if (!l->quiet)
		fprintf(stderr, "malloc_freq: %s process %d\n", how, (int)pid);
	mf_summary(l, dir);
	if (l->report)
		mf_run_report(l, dir);
}

/* SIGINT and SIGTERM, from --attach's and --detach's start: one that comes while gdb works in
 * the process only says to wait (gdb must finish: the launcher ended half way, gdb could end on
 * a write to its pipe and leave the process in a call of its that returns nowhere); with
 * --wait, it is noted in mf_wait_stop, and ends the wait. */
static volatile sig_atomic_t mf_wait_stop;
static volatile sig_atomic_t mf_wait_busy; /* 1: attaching; 2: detaching; 0, 3: not in gdb */

static void mf_wait_signal(int sig)
{
	static const char attaching[] = "malloc_freq: attaching, please wait\n",
			  detaching[] = "malloc_freq: detaching, please wait\n";
	int saved = errno;
	if (mf_wait_busy == 1)
		(void)!write(2, attaching, sizeof(attaching) - 1);
	else if (mf_wait_busy == 2)
		(void)!write(2, detaching, sizeof(detaching) - 1);
	mf_wait_stop = sig;
	errno = saved;
}

/* From now on SIGINT and SIGTERM are mf_wait_signal's; busy: what gdb does now. */
static void mf_wait_guard(int busy)
{
	struct sigaction sa = {.sa_handler = mf_wait_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	mf_wait_busy = busy;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Whether process pid has ended: its pidfd readable, or without one (a kernel before 5.3),
 * no such process or a zombie. */
static int mf_wait_ended(pid_t pid, int pidfd)
{
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		return poll(&p, 1, 0) == 1;
	}
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	const char *paren = strrchr(buf, ')');
	return !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X';
}

/* --attach --wait, once attached: until SIGINT or SIGTERM (then detached), or the process's
 * end. dir: the output directory. */
static int mf_attach_wait(struct mf_launch *l, int pidfd, const char *dir)
{
	sigset_t stop, unblocked;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &unblocked);
	sigdelset(&unblocked, SIGINT);
	sigdelset(&unblocked, SIGTERM);
	int ended = 0;
	while (!mf_wait_stop && !(ended = mf_wait_ended(l->attach, pidfd))) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		struct timespec tick = {0, 200000000}; /* (without a pidfd: a look each 200 ms) */
		ppoll(&p, pidfd >= 0, pidfd >= 0 ? NULL : &tick, &unblocked);
	}
	mf_wait_busy = ended ? 3 : 2;
	sigprocmask(SIG_UNBLOCK, &stop, NULL);
	char out[PATH_MAX];
	if (ended) {
		fprintf(stderr, "malloc_freq: process %d ended\n", (int)l->attach);
		snprintf(out, sizeof(out), "%s", dir);
		mf_summary(l, out);
		if (l->report)
			mf_run_report(l, out);
		return 0;
	}
	if (!l->quiet)
		fprintf(stderr, "malloc_freq: %s: detaching from process %d\n",
			mf_wait_stop == SIGINT ? "SIGINT" : "SIGTERM", (int)l->attach);
	char proc_dir[PATH_MAX];
	int r = mf_attach_detach(l->attach, proc_dir, sizeof(proc_dir));
	mf_wait_busy = 3; /* (gdb is done: another signal is ignored, and not said in the lines) */
	if (r) {
		if (!mf_wait_ended(l->attach, pidfd))
			return MF_EXIT_FAILED;
		fprintf(stderr, "malloc_freq: process %d ended meanwhile\n", (int)l->attach);
		snprintf(out, sizeof(out), "%s", dir);
		mf_summary(l, out);
		return 0;
	}
	mf_detached_summary(l, l->attach, proc_dir, "detached from");
	return 0;
}

/* malloc_freq --attach PID: the output directory, then the library loaded into the process;
 * with --wait, then mf_attach_wait. */
static int mf_attach_main(struct mf_launch *l)
{
	uid_t uid;
	if (mf_attach_check(l->attach, 0, &uid) || mf_find_tools(l))
		return MF_EXIT_FAILED;
	char lib[PATH_MAX]; /* (no symbolic link: --detach finds it by the path the process maps) */
	if (!realpath(l->lib, lib)) {
		mf_say("%s: %s", l->lib, strerror(errno));
		return MF_EXIT_FAILED;
	}
	/* (taken now: the process it names cannot be another one that took its pid later) */
	int pidfd = l->wait ? (int)syscall(SYS_pidfd_open, l->attach, 0) : -1;
	mf_wait_guard(1);
	const char *mode = l->mode ? l->mode : getenv("MALLOC_FREQ_MODE");
	int file_mode = mode ? mf_parse_mode(mode) : -1;
	l->dir_mode = mf_dir_mode(file_mode < 0 ? 0600 : (unsigned)file_mode);
	char dir[PATH_MAX];
	int made = 1;
	if (l->out) {
		made = mf_make_out(l->out, l->dir_mode);
		if (made < 0 || !realpath(l->out, dir))
			return MF_EXIT_FAILED;
	} else {
		if (mf_default_base(l))
			return MF_EXIT_FAILED;
		for (int n = 0;; n++) {
			if (mf_out_name(dir, sizeof(dir), l->base, l->attach, n) &&
			    !mkdir(dir, l->dir_mode))
				break;
			if (errno != EEXIST || n == 1000) {
				mf_say("cannot make %s: %s", dir, strerror(errno));
				return MF_EXIT_FAILED;
			}
		}
	}
	/* (root attaching to another user's process: the process makes its files there) */
	if (uid != geteuid() && chown(dir, uid, (gid_t)-1)) {
		mf_say("cannot give %s to user %d, whose process makes its files there: %s", dir,
		       (int)uid, strerror(errno));
		if (made)
			rmdir(dir);
		return MF_EXIT_FAILED;
	}
	struct mf_env_list env = {.n = 0};
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "MALLOC_FREQ_", 12) && strchr(*e, '=')) {
			char *name = strndup(*e, (size_t)(strchr(*e, '=') - *e));
			if (!name)
				continue;
			/* (a handler installed in a running process would outlive the detach: as
			 * --snapshot-signal and --toggle-signal, refused) */
			if (!strcmp(name, "MALLOC_FREQ_SNAPSHOT_SIGNAL") ||
			    !strcmp(name, "MALLOC_FREQ_TOGGLE_SIGNAL"))
				mf_say("--attach leaves %s out: the profiler installs no signal "
				       "handler in a process it attaches to",
				       name);
			else
				mf_env_put(name, strchr(*e, '=') + 1, &env);
			free(name);
		}
	mf_settings(l, dir, mf_env_put, &env);
	env.v[env.n] = NULL;
	char proc_dir[PATH_MAX];
	int r = mf_attach_inject(l->attach, lib, (const char *const *)env.v, proc_dir,
				 sizeof(proc_dir));
	for (int i = 0; i < env.n; i++)
		free(env.v[i]);
	if (r > 0 && r != ENOSYS)
		mf_say("process %d cannot record: it cannot make its profile directory in %s: %s "
		       "(it runs as user %d); the profiler loaded into it undid itself, and passes "
		       "every call on",
		       (int)l->attach, dir, strerror(r), (int)uid);
	else if (r > 0)
		mf_say("the profiler loaded into process %d could not start there (its standard "
		       "error says why): it records nothing, and passes every call on",
		       (int)l->attach);
	if (r) {
		if (made)
			rmdir(dir);
		return MF_EXIT_FAILED;
	}
	mf_wait_busy = 0;
	if (!l->quiet) {
		fprintf(stderr,
			"malloc_freq: attached to process %d: its calls from now on are "
			"recorded in ",
			(int)l->attach);
		mf_shell_word(stderr, dir);
		if (l->wait)
			fprintf(stderr,
				"\nmalloc_freq: stop: ^C (SIGINT) or SIGTERM to malloc_freq (pid "
				"%d); or the process's end\n",
				(int)getpid());
		else
			fprintf(stderr, "\nmalloc_freq: stop: malloc_freq --detach %d\n",
				(int)l->attach);
	}
	return l->wait ? mf_attach_wait(l, pidfd, dir) : 0;
}

/* malloc_freq --detach PID: recording stopped, the summary of what was recorded. */
static int mf_detach_main(struct mf_launch *l)
{
	uid_t uid;
	char dir[PATH_MAX];
	if (mf_attach_check(l->detach, 1, &uid) || mf_find_tools(l))
		return MF_EXIT_FAILED;
	mf_wait_guard(2);
	int r = mf_attach_detach(l->detach, dir, sizeof(dir));
	mf_wait_busy = 3;
	if (r)
		return MF_EXIT_FAILED;
	mf_detached_summary(l, l->detach, dir, "detached from");
	return 0;
}

int main(int argc, char **argv)
{
	struct mf_launch l = {0};
	int r = mf_parse_args(argc, argv, &l);
	if (r)
		return r;
	if (l.attach)
		return mf_attach_main(&l);
	if (l.detach)
		return mf_detach_main(&l);
	/* The signals passed on to the program, blocked from now until their handlers are in
	 * place (after the fork): one sent at once (`malloc_freq ... & kill -USR1 $!`) would
	 * end the launcher. */
	sigset_t passed;
	sigemptyset(&passed);
	sigaddset(&passed, SIGTERM);
	sigaddset(&passed, SIGHUP);
	if (l.snapshot_signal)
		sigaddset(&passed, l.snapshot_signal);
	if (l.toggle_signal)
		sigaddset(&passed, l.toggle_signal);
	sigprocmask(SIG_BLOCK, &passed, &mf_old_mask);
	if (mf_find_tools(&l))
		return MF_EXIT_FAILED;
	char *preload = mf_preload(l.lib);
	if (!preload) {
		mf_say("out of memory");
		return MF_EXIT_FAILED;
	}
	/* (the library's mode, given or in the environment, is the output directory's too) */
	const char *mode = l.mode ? l.mode : getenv("MALLOC_FREQ_MODE");
	int file_mode = mode ? mf_parse_mode(mode) : -1;
	l.dir_mode = mf_dir_mode(file_mode < 0 ? 0600 : (unsigned)file_mode);
	int made = l.out ? mf_make_out(l.out, l.dir_mode) : mf_default_base(&l), fds[2];
	if (made >= 0 && pipe2(fds, O_CLOEXEC)) {
		mf_say("cannot make a pipe: %s", strerror(errno));
		made = -1;
	}
	if (made < 0) {
		free(preload);
		return MF_EXIT_FAILED;
	}
	if (mf_pages_unfit())
		mf_say("%s: %s runs without it", mf_pages_unfit(), l.argv[0]);
	/* While the program runs, a terminal's ^C and ^\ are the program's (as with system(3));
	 * a SIGTERM or SIGHUP sent to the launcher is passed on to it. */
	struct sigaction ign = {.sa_handler = SIG_IGN};
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &mf_old_int);
	sigaction(SIGQUIT, &ign, &mf_old_quit);
	fflush(NULL);
	mf_child_pid = fork();
	if (mf_child_pid < 0) {
		mf_say("cannot fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &mf_old_mask, NULL);
		free(preload);
		return MF_EXIT_FAILED;
	}
	if (mf_child_pid == 0) {
		close(fds[0]);
		mf_child(&l, preload, fds[1]);
	}
	close(fds[1]);
	struct sigaction sa = {.sa_handler = mf_forward, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* (so that `kill -USR1 <launcher>` takes a snapshot as it would of the program) */
	struct sigaction held = sa;
	held.sa_flags = 0;
	mf_held_sigs[0] = l.snapshot_signal, mf_held_sigs[1] = l.toggle_signal;
	/* (where the program runs without the library, nothing in it takes them: ignored, not
	 * passed on to kill it; TERM and HUP are passed on as always, CHLD left alone) */
	for (int i = 0; i < 2; i++) {
		int sig = mf_held_sigs[i];
		if (sig && !mf_pages_unfit())
			sigaction(sig, &held, NULL);
		else if (sig && sig != SIGCHLD && sig != SIGTERM && sig != SIGHUP)
			signal(sig, SIG_IGN);
	}
	sigprocmask(SIG_SETMASK, &mf_old_mask, NULL); /* (one sent meanwhile is passed on now) */
	/* Until exec closes the pipe: the directory, then, if exec failed, why. (A message is
	 * larger than PIPE_BUF: it may come in pieces.) */
	struct mf_child_msg msgs[2], said = {.stage = -1};
	size_t have = 0;
	ssize_t got;
	while (have < sizeof(msgs) &&
	       ((got = read(fds[0], (char *)msgs + have, sizeof(msgs) - have)) > 0 ||
		(got < 0 && errno == EINTR)))
		if (got > 0)
			have += (size_t)got;
	close(fds[0]);
	if (have >= sizeof(msgs[0]))
		said = msgs[have / sizeof(msgs[0]) - 1];
	int st;
	pid_t child = mf_child_pid;
	for (int waited = 0;;) {
		/* (a held signal interrupts the wait: no SA_RESTART for those) */
		int holding = mf_held[0] || mf_held[1];
		pid_t w = waitpid(child, &st, holding ? WNOHANG : 0);
		if (w == child)
			break;
		if (w < 0 && errno != EINTR) {
			mf_say("cannot wait for %s: %s", l.argv[0], strerror(errno));
			free(preload);
			return MF_EXIT_FAILED;
		}
		if (holding && mf_pass_held(child, waited)) {
			nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
			waited++;
		} else {
			waited = 0;
		}
	}
	/* (its pid may be reused now: nothing more is passed on) */
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (l.snapshot_signal)
		signal(l.snapshot_signal, SIG_IGN);
	if (l.toggle_signal)
		signal(l.toggle_signal, SIG_IGN);
	mf_child_pid = 0;
	free(preload);
	/* Its end, as a profiled parent's wait writes it: a signal no handler of the library's
	 * sees, or the status of a program it exec'd that made no record. */
	if (said.stage == 0 && said.dir[0])
		mf_process_end_by_parent(said.dir, child, st);
	if (said.stage < 0) { /* (killed before it could say) */
		if (!l.out)
			return mf_pass_status(st, NULL);
		snprintf(said.dir, sizeof(said.dir), "%s", l.out);
	}
	if (said.stage == 0 && !said.dir[0]) {
		const char *base = getenv("MALLOC_FREQ_DIR");
		mf_say("cannot make the directory malloc_freq.%d in %s: %s", (int)child,
		       base && *base ? base : "the current directory", strerror(said.err));
		return MF_EXIT_FAILED;
	}
	if (said.stage == 1) {
		mf_say("%s: %s", l.argv[0], strerror(said.err));
		if (!l.out || made)
			rmdir(said.dir);
		return WEXITSTATUS(st);
	}
	mf_summary(&l, said.dir);
	if (l.report)
		mf_run_report(&l, said.dir);
	return mf_pass_status(st, said.dir);
}
