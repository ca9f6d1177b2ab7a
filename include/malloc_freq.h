/* malloc_freq: the API a program may call while it runs under libmalloc_freq.so.
 * Link with -lmalloc_freq_api (pkg-config malloc_freq_api): that library's functions do
 * nothing, so the program runs as before without the profiler; preloaded, libmalloc_freq.so
 * defines the same functions and its own take over. Without linking it, declare what you use
 * weak and test for it:
 *     #pragma weak malloc_freq_dir
 *     if (malloc_freq_dir) printf("profile: %s\n", malloc_freq_dir());
 * Every function may be called from any thread at any time, never allocates through the
 * program's malloc, and keeps errno unless it says it sets it. */
#ifndef MALLOC_FREQ_H
#define MALLOC_FREQ_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The absolute path of this process's profile directory, malloc_freq.<pid>[.<n>]; NULL before
 * the first recorded allocation (made at start with MALLOC_FREQ_START=off), when the profiler
 * is not loaded (the stub), or when recording is off after an error. Thread-safe; the string
 * stays valid until the process forks (a child gets its own directory). */
const char *malloc_freq_dir(void);

/* Recording on or off for the whole process, from the next allocation call on (a call already
 * being recorded in another thread completes). Calls made while off are served as usual, not
 * recorded, and counted: their number is in malloc_freq_stats and in mf_print's summary (one
 * count per thread, no stacks). MALLOC_FREQ_START=off starts the process off; otherwise it
 * starts on. Not nested: one enable undoes any number of disables. Async-signal-safe. */
void malloc_freq_enable(void);
void malloc_freq_disable(void);

/* The same for the calling thread only: its calls are recorded while both the process and the
 * thread are on (process-wide off wins). Each thread starts on. Not nested. Async-signal-safe
 * (in a handler: the switch is the interrupted thread's). */
void malloc_freq_thread_enable(void);
void malloc_freq_thread_disable(void);

/* The entry points, in this order in malloc_freq_stats' arrays. */
#define MALLOC_FREQ_ENTRY_POINTS 9
#define MALLOC_FREQ_ENTRY_NAMES                                                                    \
	{                                                                                          \
		"malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",  \
		    "memalign", "valloc", "pvalloc"                                                \
	}

struct malloc_freq_stats {
	uint64_t calls[MALLOC_FREQ_ENTRY_POINTS]; /* recorded calls by entry point */
	uint64_t bytes[MALLOC_FREQ_ENTRY_POINTS]; /* the bytes they requested */
	uint64_t threads;     /* threads that got a profile file, ended or not */
	uint64_t calls_off;   /* calls made while recording was off */
	uint64_t sample_rate; /* 1: counts exact; N: scaled estimates (MALLOC_FREQ_SAMPLE) */
	uint64_t reserved[5]; /* zero */
};

/* The process's totals so far, from memory (no file is read or written): every thread's
 * recorded calls and bytes by entry point, threads that ended included, and the calls made
 * while off. Sampled runs give estimates, scaled as mf_print scales them. Counts of threads
 * that are allocating meanwhile are read as they stand: each total is at least what it was at
 * the call, and may include calls made during it. Cost: one pass over the live threads' trie
 * nodes (a few nanoseconds each: 0.35 ms for 100,000; a thread ending pays one such pass over
 * its own). Returns 0;
 * -1 with errno EINVAL (s is NULL), ENOSYS (the profiler is not loaded: *s is zeroed) or EPERM
 * (the calling thread is in seccomp strict mode, where the profiler makes no system call). */
int malloc_freq_stats(struct malloc_freq_stats *s);

/* A snapshot: every thread's counts now, threads that ended included, written as a directory
 * snap.<n>[.<label>] of the profile directory (mf_print --snapshot, --since, --between,
 * --list). label may be NULL; it is cut to 63 bytes, and bytes other than letters, digits, '_'
 * and '-' become '_'. The directory appears whole, renamed into place once written. Each
 * running thread's copy is exact as of one moment of that thread: every call before it counted
 * whole (calls and bytes), every later one left to the next snapshot. A thread that keeps
 * allocating may wait, before one call, for the copy of its own file; threads that do not are
 * never stopped. Threads that
 * start or end wait for it. Costs a copy of each running thread's file (a 100,000-node trie
 * is 3.2 MB: 2.6 ms) and a hard link for each ended one. Returns its number (1, 2, ... in this
 * process), or -1 with errno: ENOSYS (the stub), EPERM (from a thread in seccomp strict mode),
 * or what creating the files met (EACCES, ENOSPC, EFBIG, ...: nothing of the snapshot is
 * left). Not async-signal-safe (see
 * MALLOC_FREQ_SNAPSHOT_SIGNAL). */
int malloc_freq_snapshot(const char *label);

/* Takes a snapshot labelled "reset" that mf_print reads as the start of counting: by default
 * it reports only what came after the last reset (--since 0 shows the whole run), and
 * malloc_freq_stats counts from here too (calls other threads make while it runs may fall on
 * either side). Nothing is lost: the snapshot holds what came before. Returns its number, or
 * -1 with errno as malloc_freq_snapshot. Not async-signal-safe. */
int malloc_freq_reset(void);

/* Tag scopes: every call the calling thread makes between a push and its pop is recorded
 * under the tag (and the tags it is nested in), shown by mf_print as frames "[tag] name" at
 * the outermost end of its stacks, and by mf_print --tags as a tree of tag paths. Tags with
 * equal names are one tag. A name is cut to 63 bytes; 16 nested tags are kept (pushes deeper
 * than that are counted, so pops still match, but not recorded); a process keeps 3,967 names,
 * and records any more as "...". A pop without a push does nothing. Each push and pop makes
 * the thread's next call take the slow path (its hot stacks are of the old path): a few
 * thousand instructions once. Not async-signal-safe (a name's first push takes a lock). */
void malloc_freq_tag_push(const char *name);
void malloc_freq_tag_pop(void);

#ifdef __cplusplus
}

/* A tag for the lifetime of a scope: { malloc_freq_tag tag("parser"); ... } */
class malloc_freq_tag
{
      public:
	explicit malloc_freq_tag(const char *name)
	{
		malloc_freq_tag_push(name);
	}
	~malloc_freq_tag()
	{
		malloc_freq_tag_pop();
	}
	malloc_freq_tag(const malloc_freq_tag &) = delete;
	malloc_freq_tag &operator=(const malloc_freq_tag &) = delete;
};
#endif

#endif
