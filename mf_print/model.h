/* mf_print's merged model of everything read: processes, threads, a frame table interned once,
 * stacks as arrays of frame ids, and samples (a stack as one thread recorded it) with a column
 * of counters per metric. Every report renders from it and only from it; a new output is a new
 * file reading these tables, a new metric a new column. Built from validated profiles; never
 * prints. Not thread-safe. */
#ifndef MF_MODEL_H
#define MF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "malloc_freq_format.h"
#include "names.h"
#include "reader.h"
#include "symbolize.h"

#define MF_NONE UINT32_MAX

/* What a sample counts. Each is a column of mf_model.values; reports pick one to sort and
 * threshold by and show the others. */
enum mf_metric {
	MF_METRIC_CALLS, /* calls to the allocation function */
	MF_METRIC_BYTES, /* bytes those calls requested */
	MF_METRIC_TIME,	 /* MALLOC_FREQ_WEIGHT=time: thread CPU ns before those calls (not
			    scaled by sampling: each recorded call carries all the time since the
			    one recorded before it) */
	/* (format 4) blocks freed before their thread's next allocation call */
	MF_METRIC_TEMPORARY,
	/* (MALLOC_FREQ_LIFETIMES=1) blocks, and their requested bytes, not freed when the file
	 * was read: at exit, the leaks */
	MF_METRIC_LEAKED_BLOCKS,
	MF_METRIC_LEAKED,
	/* (lifetimes) blocks, and their bytes, live at their process's peak of live bytes */
	MF_METRIC_PEAK_BLOCKS,
	MF_METRIC_PEAK,
	/* (lifetimes, --short-lived) blocks freed within the threshold: the lifetime buckets
	 * below mf_model.short_buckets */
	MF_METRIC_SHORT,
	/* (lifetimes, format 8) the most blocks, and bytes, live at once, each thread's sample
	 * its own maximum as that thread saw it; a sum of samples (several threads or processes,
	 * a caller's stacks) is the sum of their maximums, which may come at different moments:
	 * at most that many were live at once */
	MF_METRIC_MAX_BLOCKS,
	MF_METRIC_MAX_LIVE,
	/* (lifetimes, format 8) the freed blocks whose lifetime is known, and the nanoseconds
	 * they lived, summed: their mean lifetime is one over the other */
	MF_METRIC_FREED,
	MF_METRIC_LIFETIME,
	MF_METRICS
};

struct mf_metric_info {
	const char *name;   /* as --sort and --weight name it */
	const char *plural; /* "of all calls", in headings */
};
extern const struct mf_metric_info mf_metric_info[MF_METRICS];
extern const char *const mf_entry_names[MF_ENTRY_COUNT];

enum mf_frame_kind {
	MF_FRAME_CODE,	    /* an address in a module, as symbolization found it */
	MF_FRAME_ENTRY,	    /* the allocation function; offset is the enum mf_entry */
	MF_FRAME_TRUNCATED, /* the stack was cut at the depth limit (its outermost frame) */
	MF_FRAME_JIT,	    /* code that no loaded object maps (JIT-compiled, generated);
			       offset is the absolute address */
	MF_FRAME_TAG,	    /* a tag scope (malloc_freq_tag_push); function is its name */
};

/* A module of any process: the same file with the same build-id is one module. */
struct mf_model_module {
	const char *path;
	const char *base; /* path without directories, for names like "libfoo.so+0x1234" */
	uint8_t build_id[MF_BUILD_ID_LEN];
	uint32_t build_id_len;
	uint64_t span;		   /* its loaded segments' extent in the process; 0: not known */
	uint64_t ended_ns;	   /* the last end of a process that had it (CLOCK_REALTIME) */
	int unended;		   /* one of them has no end known (running, killed) */
	struct mf_sym_module *sym; /* its symbolizer session; NULL until its first frame */
	uint32_t frames;	   /* frames symbolized in it */
};

/* One function at one address: a return address of a module, or one of the functions inlined
 * there (each a frame of its own, inlined_into the one that contains it). */
struct mf_frame {
	uint64_t offset;       /* the return address relative to the module's load bias */
	uint32_t module;       /* index into mf_model.modules; MF_NONE for the other kinds */
	uint32_t inlined_into; /* the frame this function was inlined into; MF_NONE: none */
	const char *function;  /* demangled, in full; NULL when not known */
	const char *file;      /* source file as the debug info names it; NULL when not known */
	uint32_t line, column; /* 0 when not known */
	uint8_t kind;	       /* enum mf_frame_kind */
	uint8_t lang;	       /* enum mf_lang of the function's name */
};

struct mf_stack {
	uint64_t first; /* its frames: mf_model.stack_frames[first .. first + depth) */
	uint32_t depth; /* outermost frame first, the entry frame (MF_FRAME_ENTRY) last */
	uint32_t entry; /* enum mf_entry */
	uint32_t hash;
	uint32_t last_sample; /* (while building: the latest sample of this stack) */
};

/* A stack as one thread recorded it; its counters are mf_model.values[metric][sample]. */
struct mf_sample {
	uint32_t stack;
	uint32_t thread;
};

/* How a process ended, as far as can be known. */
enum mf_end {
	MF_END_UNKNOWN,	   /* no process record (format 1 or 2): only its threads' files speak */
	MF_END_RUNNING,	   /* running when read (the same pid and start time are alive) */
	MF_END_UNRECORDED, /* ended without a word: killed with no profiled parent, crashed, or
			      exec'd into a program not profiled; status (if status_known) is
			      then its pid's exit status, as its parent's wait saw it */
	MF_END_EXIT,	   /* exit() or a return from main; status (if status_known) */
	MF_END_QUICK_EXIT, /* _exit() or _Exit(); status */
	MF_END_SIGNAL,	   /* killed by signal status */
	MF_END_EXEC,	   /* replaced by another image (exec_to) */
	MF_END_DETACHED,   /* attached to, detached from at detached_ns, and since ended (how is
			      not known: nothing records it after detach) */
};

/* A snapshot of a process (snap.<n>, malloc_freq_format.h): its number and when it was taken. */
struct mf_snapshot_mark {
	uint64_t number;
	uint64_t time_ns; /* CLOCK_REALTIME */
};

/* One process image: a malloc_freq.<pid>[.<n>] directory. */
struct mf_process {
	uint64_t pid, ppid;	   /* ppid 0: not known */
	const char *dir;	   /* the directory */
	const char *name;	   /* the program: argv[0]'s base name, else its executable's, else
				      "pid N" */
	const char *exe;	   /* its executable, "" when not known */
	const char *cmdline;	   /* its arguments joined by spaces (not escaped), "" */
	int cmdline_cut;	   /* the record held only the start of it */
	const char *exec_from_dir; /* the name of the directory of the image it replaced, "" */
	uint64_t start_ticks;	   /* start time (clock ticks after boot), 0 when not known */
	uint64_t start_ns, end_ns; /* its record made (its first allocation), its end written */
	uint64_t image_ns; /* the profiler loaded into its image (a forked child: its parent's
			      image's); 0: not known */
	int end;	   /* enum mf_end */
	int status;	   /* exit status or signal, by end */
	int status_known, by_parent, core;
	int raw_exit; /* its runtime ends it past exit() (Go's): only a parent sees its end */
	uint64_t detached_ns; /* malloc_freq --detach stopped recording then (its record was made
				 at the attach, start_ns); 0: never (format 11) */
	uint32_t exec_from, exec_to; /* the images before and after it; MF_NONE */
	uint64_t unknown_frees;	     /* (lifetimes) frees of blocks never seen allocated */
	uint64_t peak_bytes, peak_blocks, peak_ns; /* (lifetimes) its peak of live bytes, and
						      when it was left (0: at the end; version 6:
						      reached); sampled: the sampled blocks', not
						      scaled */
	uint64_t peak_id;	   /* (version 6) the number of its last maximum (struct mf_life) */
	uint64_t sample_rate;	   /* of its threads (1: every call; 0: no thread read) */
	uint64_t unrecorded_calls; /* calls of its threads that had no file, and their bytes */
	uint64_t unrecorded_bytes;
	uint32_t threads;    /* thread files read */
	uint32_t files;	     /* thread files in its directory */
	uint32_t *module_of; /* its module map's indexes as model modules */
	uint32_t nmodules;
	const char *tags; /* its tag names, MF_TAG_NAME_LEN bytes each (ntags); NULL: none */
	uint32_t ntags;
	struct mf_snapshot_mark *snaps; /* its snapshots, in number order (malloc'd; NULL: none) */
	uint32_t nsnaps;
};

/* Requests of one size bucket (malloc_freq_format.h: MF_SIZE_BUCKET) in one sample. */
struct mf_size_cell {
	uint32_t sample;
	uint32_t bucket;
	uint64_t count; /* scaled like the calls */
};

struct mf_thread {
	uint32_t process;
	uint64_t tid;
	char name[MF_THREAD_NAME_LEN];
	const char *path;     /* its .prof file */
	uint64_t sample_rate; /* 1: every call; N: one in N, counts scaled by N */
	uint64_t seen;	      /* calls it saw, recorded or not (unscaled) */
	uint64_t lost;	      /* calls it could not record */
	uint64_t nested;      /* calls counted apart: a signal handler's, inside the profiler */
	uint64_t off;	      /* calls made while recording was off (scaled, as seen) */
	int complete;	      /* finalized at thread or process exit */
	uint64_t start_ns, end_ns; /* its file made, finalized (0: never) */
	/* (format 9) its timeline: the records read (malloc'd; NULL: none), the interval between
	 * them at the end, its last look at the clock and its calls then; timeline: it kept one */
	struct mf_timeline_record *records;
	uint32_t nrecords;
	int timeline;
	int by_entry; /* its records hold calls and bytes by entry point (format 11) */
	uint64_t interval_ns, checked_ns, checked_calls, checked_live;
	uint64_t timeline_from_ns; /* an earlier state subtracted: the timeline starts then */
};

struct mf_model {
	struct mf_model_module *modules;
	size_t nmodules, cap_modules;
	struct mf_frame *frames;
	size_t nframes, cap_frames;
	uint32_t entry_frame[MF_ENTRY_COUNT];
	uint32_t truncated_frame;
	uint32_t *stack_frames; /* every stack's frame ids, one after the other */
	size_t nstack_frames, cap_stack_frames;
	struct mf_stack *stacks;
	size_t nstacks, cap_stacks;
	uint32_t max_depth; /* of any stack */
	struct mf_sample *samples;
	size_t nsamples, cap_samples;
	uint64_t *values[MF_METRICS]; /* by sample; scaled by the thread's sample rate (after
					 mf_model_finish; before it, NULL until a value is added) */
	uint64_t *zeros;	      /* the column of every metric no thread gave a value */
	struct mf_thread *threads;
	size_t nthreads, cap_threads;
	struct mf_process *processes;
	size_t nprocesses, cap_processes;
	struct mf_size_cell *sizes; /* every sample's size histogram, in the order added */
	size_t nsizes, cap_sizes;
	struct mf_size_cell *lives; /* (lifetimes) every sample's lifetime histogram: buckets of
				       nanoseconds from allocation to free, of the freed blocks */
	size_t nlives, cap_lives;
	int has_leaf_records; /* some thread's file (format 4) has temporaries and sizes */
	int has_lifetimes;    /* some thread's file has lifetimes (MALLOC_FREQ_LIFETIMES) */
	size_t timeline_old;  /* threads of format 8 or older: no timeline */
	size_t life_old;      /* threads whose lifetimes have no maximums and lifetime sums
				 (format 7 or older): with any, those columns are not held */
	/* Set before threads are added (--short-lived): the lifetime buckets 0 to short_buckets
	 * - 1, lifetimes under 2^(short_buckets - 1) ns, count as short (MF_METRIC_SHORT); 0:
	 * not asked for, no such column. */
	uint32_t short_buckets;
	uint64_t unknown_frees;	    /* frees of blocks never seen allocated, of all processes */
	int estimated;		    /* some thread was sampled: counts are estimates */
	int weighted;		    /* some thread recorded time (MF_METRIC_TIME) */
	int saturated[MF_METRICS];  /* some sum reached UINT64_MAX and stayed there */
	struct mf_symbolizer *sym;  /* not owned */
	struct mf_model_index *idx; /* the building's hash tables */
};

/* Whether the model holds metric k: calls and bytes always, time when weighted, temporaries
 * from format 4, the leak and peak columns with lifetimes, the maximums and lifetime sums
 * with lifetimes of format 8 in every file (a column it lacks is all zeros, not a
 * measurement). */
static inline int mf_model_holds(const struct mf_model *m, int k)
{
	switch (k) {
	case MF_METRIC_CALLS:
	case MF_METRIC_BYTES:
		return 1;
	case MF_METRIC_TIME:
		return m->weighted;
	case MF_METRIC_TEMPORARY:
		return m->has_leaf_records;
	case MF_METRIC_SHORT:
		return m->has_lifetimes && m->short_buckets;
	case MF_METRIC_MAX_BLOCKS:
	case MF_METRIC_MAX_LIVE:
	case MF_METRIC_FREED:
	case MF_METRIC_LIFETIME:
		return m->has_lifetimes && !m->life_old;
	default:
		return m->has_lifetimes;
	}
}

/* The metrics the --json, --pprof, --dot and --html outputs carry, a column or a field each:
 * those m or base (NULL: none) holds, in enum order, into held[MF_METRICS]. Their number. */
static inline int mf_model_metrics(const struct mf_model *m, const struct mf_model *base, int *held)
{
	int n = 0;
	for (int k = 0; k < MF_METRICS; k++)
		if (mf_model_holds(m, k) || (base && mf_model_holds(base, k)))
			held[n++] = k;
	return n;
}

/* An empty model that symbolizes with sym (which must outlive it). 0 or -ENOMEM. */
int mf_model_init(struct mf_model *m, struct mf_symbolizer *sym);
void mf_model_free(struct mf_model *m);

/* Adds a process as info describes it (its strings are copied; threads, module_of, exec_from
 * and exec_to are not taken). Returns its index in *id. 0 or -ENOMEM. */
int mf_model_add_process(struct mf_model *m, const struct mf_process *info, uint32_t *id);
/* After every process and thread is added, before any report: links each image to the one it
 * replaced by exec (exec_from_dir, same pid), marking that one's end MF_END_EXEC, and gives
 * every metric a column (zeros where no thread gave a value). 0 or -ENOMEM. */
int mf_model_finish(struct mf_model *m);
/* The process's module map (again, when it has grown: only new entries are added). 0 or
 * -ENOMEM. */
int mf_model_add_modules(struct mf_model *m, uint32_t process, const struct mf_modmap *map);

/* Adds one thread's profile (validated, its modules checked against its process's map) to
 * process: new addresses are symbolized, stacks interned, its counts become samples; the
 * profile's nodes are released (mf_profile_release) as they are done with. 0, -ENOMEM, or
 * -EINVAL for a module its process's map does not have. */
int mf_model_add_thread(struct mf_model *m, uint32_t process, struct mf_profile *p);

/* The frames of a stack, outermost first, the entry frame last. */
static inline const uint32_t *mf_model_stack_frames(const struct mf_model *m, uint32_t stack)
{
	return m->stack_frames + m->stacks[stack].first;
}

/* A sample's stack as reports walk it, in one word: the offset of its first frame in
 * stack_frames and its depth. */
static inline uint64_t mf_model_view(const struct mf_model *m, uint32_t sample)
{
	const struct mf_stack *s = &m->stacks[m->samples[sample].stack];
	return s->first << 24 | s->depth;
}
#define MF_VIEW_DEPTH(v) ((uint32_t)((v)&0xffffff))
/* The frame at position k (0: the outermost) of a view. */
static inline uint32_t mf_model_view_frame(const struct mf_model *m, uint64_t view, uint32_t k)
{
	return m->stack_frames[(view >> 24) + k];
}

/* a + b, or UINT64_MAX (and *flag set) when it does not fit. */
static inline uint64_t mf_sat_add(uint64_t a, uint64_t b, int *flag)
{
	uint64_t r;
	if (__builtin_add_overflow(a, b, &r)) {
		*flag = 1;
		return UINT64_MAX;
	}
	return r;
}

/* n * rate, or UINT64_MAX (and *flag set) when it does not fit. */
static inline uint64_t mf_sat_mul(uint64_t n, uint64_t rate, int *flag)
{
	uint64_t r;
	if (__builtin_mul_overflow(n, rate, &r)) {
		*flag = 1;
		return UINT64_MAX;
	}
	return r;
}

/* Cells (sizes or lives, n of them) by sample, or by_stack by their samples' stack:
 * cell[first[k] .. first[k + 1]) are sample (stack) k's (first: nsamples (nstacks) + 2
 * entries). 0 or -ENOMEM; free both. */
int mf_model_cells_by(const struct mf_model *m, const struct mf_size_cell *cells, size_t n,
		      int by_stack, size_t **first, uint32_t **cell);
/* The bucket that holds the median of the histograms of samples items[0..count) (cells
 * indexed as above), or -1 when they are empty. */
int mf_model_median(const struct mf_size_cell *cells, const size_t *first, const uint32_t *cell,
		    const uint32_t *items, size_t count, uint32_t buckets);

/* The total of a metric over all samples, per entry point (entry[MF_ENTRY_COUNT], may be
 * NULL). */
uint64_t mf_model_total(const struct mf_model *m, enum mf_metric metric, uint64_t *entry);
/* Whether a sum of metric stopped at 2^64 - 1: a stack's, or its total (mf_model_total's). */
static inline int mf_model_saturated(const struct mf_model *m, enum mf_metric metric,
				     uint64_t total)
{
	return m->saturated[metric] || total == UINT64_MAX;
}
/* The run's span (CLOCK_REALTIME ns): its processes' earliest start (their first allocation)
 * and latest end, 0 where none is known. 1 when every process has a start and an end (the
 * duration is end - start), else 0. */
int mf_model_span(const struct mf_model *m, uint64_t *start, uint64_t *end);
/* The sampling rate of m's counts: its threads' largest (1: every call recorded). */
static inline uint64_t mf_model_rate(const struct mf_model *m)
{
	uint64_t rate = 1;
	for (size_t i = 0; i < m->nthreads; i++)
		rate = m->threads[i].sample_rate > rate ? m->threads[i].sample_rate : rate;
	return rate;
}

#endif
