/* Internal declarations of libmalloc_freq: attribute macros, and the interfaces of the
 * library's modules that have no header of their own (thread.h, fork.h, trie.h, loaded.h,
 * life/life.h, unwind/unwind.h: each included by the files that use it). Everything here runs
 * inside the host's allocation calls: no malloc, no stdio, no exit; errno is the caller's to
 * keep. The files of lib/, one concept each:
 *   interpose.c   the allocation entry points, dlclose, dl_iterate_phdr, the constructor
 *   exits.c       _exit, _Exit, the wait family: the process record told how a process ended
 *   identity.c    set*uid, chroot, unshare, setns: the files readied for who the process becomes
 *   real.c        the next allocator and the bootstrap arena
 *   loader_alloc.c  the loader's allocations for the profiler, kept out of the program's heap
 *   thread.c      thread state, start and exit, the snapshot copy protocol, the counters
 *                 (thread.h: the thread-local and thread state, mf_wiped: what the hot path
 *                 touches)
 *   sampling.c    the sampling draw: random numbers, the countdown's next value
 *   fork.c        the fork lock, each module's prefork and postfork in order, a child's reset
 *                 (fork.h: the lock and the signals blocked while it is held)
 *   cpu_clock.c   a thread's CPU time for MALLOC_FREQ_WEIGHT=time (own header, cpu_clock.h)
 *   pool.c        the slots thread states live in
 *   trie.c        the stack trie (its layout in trie.h)
 *   profile_file.c  the process directory and the per-thread files
 *   process.c     the process record; process_end.c: a child's end as its parent writes it
 *   modules.c     the module map;  loader.c: the dynamic loader's lock, watched
 *   objects.c     the loaded object at an address: _dl_find_object, or a table of its own
 *   compat.h      stand-ins for what glibc after 2.28 brought (gettid, strerrordesc_np, ...)
 *   rebind.c      slots that reach an allocator past the entry points, pointed at stubs
 *   got.c         an object's GOT and PLT slots;  namespaces.c: dlmopen's namespaces
 *                 (loaded.h: the interfaces of the loaded objects' files, modules.c to here)
 *   fds_apart.c   files opened in a descriptor table of their own
 *   confine.c     prctl and syscall: seccomp strict mode;  bpf.c: a filter read and run
 *   config.c, parse.c  the settings;  control.c: the public API, signals, the control thread
 *   snapshot.c    snapshot directories;  tags.c: tag names and the `tags` file
 *   timeline.c    the thread's totals over time, in its file's header
 *   attach.c      loaded into a running process (malloc_freq --attach), and detached
 *   log.c         lines on stderr;  write_all.c: buffers written, read whole;  format.c: snprintf
 *   spin.c        the spinlocks' wait
 *   unwind/, life/  stack capture and lifetimes (maps in their internal.h; what the rest of
 *                 lib/ sees of them: unwind/unwind.h, life/life.h) */
#ifndef MF_INTERNAL_H
#define MF_INTERNAL_H

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "malloc_freq_format.h"
#include "unwind/unwind.h"

#define MF_EXPORT      __attribute__((visibility("default")))
#define MF_NOINLINE    __attribute__((noinline))
#define MF_INLINE      inline __attribute__((always_inline)) /* the hot path, across files */
#define MF_TLS	       __thread __attribute__((tls_model("initial-exec")))
#define mf_likely(x)   __builtin_expect(!!(x), 1)
#define mf_unlikely(x) __builtin_expect(!!(x), 0)

/* mf_nonzero(w), mf_count_down(n), MF_FRAME_HERE(f) and the rest of the processor's part */
#include "arch.h"

/* Fresh anonymous memory about to be used: written first, each page faults in once (read
 * first, it faults twice: in comes the zero page, then a copy of it). A page fault costs as
 * much as two thousand instructions, and a short process's profiler touches few pages. */
static inline void mf_pages_touch(void *p, size_t len)
{
	for (size_t i = 0; i < len; i += MF_PAGE_SIZE)
		((volatile char *)p)[i] = 0;
}
/* len rounded up to whole pages. */
static inline size_t mf_pages_round(size_t len)
{
	return (len + MF_PAGE_SIZE - 1) & ~(size_t)(MF_PAGE_SIZE - 1);
}
/* len bytes of fresh anonymous memory, touched; NULL if there is none. */
static inline void *mf_pages_new(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	mf_pages_touch(p, len);
	return p;
}

/* len bytes of address space to grow into, inaccessible until mprotect makes a part of it so
 * (a program that locked its future memory, mlockall, would have it all filled in and locked
 * at once otherwise), without huge pages (which would fill in 2 MiB at a time where they are
 * on for all memory); NULL if there is none. */
static inline void *mf_pages_reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

/* The mapping of len bytes at p (from mf_pages_new or this) made new_len long: its pages move
 * with it if it must move (none copied, none faulted in again), the new ones touched. NULL if
 * it cannot grow; p is then as it was. */
static inline void *mf_pages_grow(void *p, size_t len, size_t new_len)
{
	len = mf_pages_round(len);
	void *q = mremap(p, len, new_len, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return NULL;
	if (new_len > len)
		mf_pages_touch((char *)q + len, new_len - len);
	return q;
}

/* config.c: settings from the environment, read once at start. */
struct mf_config {
	char dir[MF_PATH_LEN]; /* absolute directory the profile directory goes into */
	unsigned depth;	       /* frames kept per stack */
	uint64_t sample;       /* record on average one call in this many; 1: every call */
	double sample_log;     /* log(1 - 1/sample), for drawing geometric intervals */
	uint64_t seed;	       /* with have_seed: sampling is reproducible */
	int have_seed;
	int unwind;	     /* enum mf_unwind_mode */
	int hot;	     /* every call recorded, stacks taken the cached way: the hot path */
	int lifetimes;	     /* MALLOC_FREQ_LIFETIMES=1: every block's free matched to its leaf */
	int start_off;	     /* MALLOC_FREQ_START=off: nothing recorded until malloc_freq_enable */
	int snapshot_signal; /* MALLOC_FREQ_SNAPSHOT_SIGNAL; 0: none */
	int toggle_signal;   /* MALLOC_FREQ_TOGGLE_SIGNAL; 0: none */
	uint64_t snapshot_interval_ms; /* MALLOC_FREQ_SNAPSHOT_INTERVAL; 0: none */
	uint64_t timeline_ms;	       /* MALLOC_FREQ_TIMELINE; 0: off */
	int weight_time; /* MALLOC_FREQ_WEIGHT=time: CPU time between recorded calls, per stack */
	char cache[MF_PATH_LEN];      /* directory of the rule cache; empty: none */
	unsigned file_mode, dir_mode; /* MALLOC_FREQ_MODE: the profile's files and directories */
	int find_object_table; /* MALLOC_FREQ_FIND_OBJECT=table: no _dl_find_object (tests) */
};
enum mf_unwind_mode {
	MF_UNWIND_CACHED,    /* rules confirmed by libunwind, walked without it */
	MF_UNWIND_LIBUNWIND, /* unw_backtrace for every capture */
	MF_UNWIND_CHECK,     /* cached, and every capture compared with unw_backtrace */
};
extern struct mf_config mf_config;
void mf_config_load(void);

/* interpose.c: another copy of the library was loaded first and records; this one only passes
 * every call on. */
int mf_interpose_aside(void);
/* interpose.c: the library started (it found the allocator, and is the copy that records). */
int mf_interpose_started(void);
/* interpose.c: the library could not start (it said why): it records nothing in this
 * process, and its functions of malloc_freq.h answer as the stub library's do. */
int mf_interpose_failed(void);
/* interpose.c: before a function of malloc_freq.h acts, the library started if nothing started
 * it yet (a library's constructor that calls one before ours ran, and before any allocation),
 * or waited for while another thread starts it: 0, or -1 if it could not start (or, in a
 * signal handler, this thread's start is what it interrupted). errno is kept. */
int mf_interpose_api(void);

/* log.c: one line on stderr, with write(2); never allocates. Nothing once descriptor 2 is no
 * longer the file mf_log_init (at start) found there. */
void mf_log_init(void);
void mf_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* mf_log the first time this line is reached in the process, never again. */
#define MF_LOG_ONCE(...)                                                                           \
	do {                                                                                       \
		static int said_;                                                                  \
		if (!__atomic_exchange_n(&said_, 1, __ATOMIC_RELAXED))                             \
			mf_log(__VA_ARGS__);                                                       \
	} while (0)
#include "format.h" /* mf_format */

/* write_all.c: buf[0..len) written to fd whole, again after EINTR and short writes: 0, or
 * -errno (-EIO: a write wrote nothing). Async-signal-safe. */
int mf_write_all(int fd, const void *buf, size_t len);
/* write_all.c: the first bytes of the file at path into buf, up to size (read until then or
 * its end): how many, or -1 if it cannot be opened or read. more (or NULL): set to whether the
 * file holds more. In the caller's descriptor table (mf_fds_apart keeps it the profiler's). */
ssize_t mf_read_head(const char *path, char *buf, size_t size, int *more);

/* An allocator's entry points: the one the program's calls reach (mf_real.alloc), or one a
 * library reaches past the profiler (rebind.c's tables, which assembly stubs index by this
 * layout: 72 bytes, in this order). */
struct mf_allocator {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void (*free)(void *);
};
/* real.c: the next allocator in the lookup order. Until mf_real_init() the pointers lead to a
 * small static bootstrap arena, so they are never NULL. */
struct mf_real {
	struct mf_allocator alloc;		/* (first: the hot path's loads) */
	void *(*realloc_first)(void *, size_t); /* the first in the lookup order (reallocarray's) */
	int (*dlclose)(void *);
	int (*dl_iterate_phdr)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
	/* what the profile's files depend on: who the process is, what its root is; NULL until
	 * found (then the system call) */
	int (*setuid)(uid_t);
	int (*seteuid)(uid_t);
	int (*setreuid)(uid_t, uid_t);
	int (*setresuid)(uid_t, uid_t, uid_t);
	int (*chroot)(const char *);
	int (*pthread_setcanceltype)(int, int *);
};
extern struct mf_real mf_real;
/* Returns 0, or -1 when an allocation function could not be found (then the bootstrap arena
 * keeps serving and recording stays off). */
int mf_real_init(void);
/* The loader's dlclose and dl_iterate_phdr, found now where mf_real_init has not yet found
 * them: for a call that reaches the profiler while its own start runs in the same thread. */
void mf_real_init_dl(void);
/* Whether this is the first copy of the library in the loaded objects (the one the program's
 * calls reach first), or the only one. Any other copy stays out of the way. */
int mf_real_first_copy(void);
/* Says on stderr which entry points another object defines before the profiler (the program's
 * calls to them never reach it), naming the object. */
void mf_real_say_shadowed(void);
int mf_real_is_bootstrap(const void *p);
/* The blocks free() does not hand to the real free at once, but to mf_free_apart: those at p
 * where p - lo < span (unsigned), the bootstrap arena's; all of them once
 * mf_real_free_all_apart has been called (lifetimes: every free is charged to its leaf). One
 * compare in free() for both. */
extern const unsigned char *mf_free_apart_lo;
extern size_t mf_free_apart_span;
void mf_real_free_all_apart(void);
/* realloc of a bootstrap block: moves it to the real allocator. */
void *mf_real_move_bootstrap(void *p, size_t size);
/* An allocation the profiler makes through another library (the loader's, loading libunwind;
 * libunwind's per-thread block): from the bootstrap arena while it lasts, so that the program's
 * heap is laid out as it would be without the profiler. align: 0 for malloc's. */
void *mf_real_own(size_t align, size_t n, int zero);
/* The same from the bootstrap arena only: NULL (errno kept) when it cannot hold the block. */
void *mf_real_arena(size_t align, size_t n, int zero);
void mf_real_free_bootstrap(void *p); /* free() of a bootstrap block: kept for mf_real_own */
size_t mf_real_bootstrap_size(const void *p); /* what a bootstrap block was asked to hold */
/* Is fn a function of this copy of the library? (The first call walks the loaded objects, under
 * the loader's lock: from mf_init only, never inside malloc or a signal handler.) */
int mf_real_ours(void *fn);
void *mf_real_own_realloc(void *old, size_t n);

/* profile_file.c: the process directory and the per-thread files. */
struct mf_prof_file {
	struct mf_prof_header
	    *header; /* the mapping: the header (MF_HEADER_SIZE), then the nodes */
	struct mf_node *nodes;
	uint64_t capacity; /* nodes the file holds now */
	size_t reserved;   /* bytes of address space mapped (beyond the file's end too) */
	dev_t dev;
	ino_t ino;
	int grow_failed;  /* the file could not grow once: do not retry for every new node */
	int header_whole; /* the header's pages after the first are reserved on disk: 1; -1: that
			     failed (the timeline keeps to the first page) */
	char name[32];	  /* in the process directory */
	char path[MF_PATH_LEN];
};
/* Creates the process directory if this process has none yet; 0 or -errno. */
int mf_prof_dir_ensure(void);
const char *mf_prof_dir(void);
/* The process directory, checked to be the one made for this process: a descriptor to create
 * and open its files with (openat) and give back with mf_prof_dir_close; or -errno (said on
 * stderr once). */
int mf_prof_dir_open(void);
void mf_prof_dir_close(int fd);
/* From now on keep the process directory and the one it lies in open (at a high descriptor):
 * before a chroot hides their paths. */
void mf_prof_dir_keep(void);
/* The process directory and its files are given to user uid (if it is another, and this
 * process may): before the process becomes that user, so that its threads can still create
 * and grow their files. errno is kept. */
void mf_prof_give_to(uid_t uid);
int mf_prof_dir_mine(void);    /* the directory is this process's (not a forked parent's) */
void mf_prof_dir_forget(void); /* in a forked child: the next file goes into a new directory */
int mf_prof_open(struct mf_prof_file *f, pid_t tid); /* 0 or -errno */
/* 0 if a file may grow to size without the kernel sending SIGXFSZ (RLIMIT_FSIZE); -EFBIG. */
int mf_prof_size_allowed(off_t size);
/* A 256th of RLIMIT_AS, in whole pages (SIZE_MAX without a limit): the most address space one
 * part of the profiler takes where the program's is limited. */
size_t mf_prof_as_share(void);
/* Makes room in the file for twice its nodes: 0, or -1 (it cannot grow: said once). Outside
 * the thread's grow lock: the descriptor task (mf_fds_apart) takes a lock of its own, which a
 * snapshot holds while it takes each thread's grow lock. */
int mf_prof_extend(struct mf_prof_file *f);
/* Then, under the grow lock, doubles the mapping (to *capacity nodes); returns the nodes,
 * which the header moved with if they moved, or NULL (said once). */
struct mf_node *mf_prof_grow(void *file, uint64_t *capacity);
/* Reserves on disk the header's pages after the first (a new file has a hole there), before
 * the timeline first writes to them: 0, or -1 (said once; not tried again). By the file's
 * thread, as mf_prof_extend. */
int mf_prof_reserve_header(struct mf_prof_file *f);
void mf_prof_close(struct mf_prof_file *f);
void mf_prof_finalize(struct mf_prof_header *h, uint32_t state, pid_t tid);

/* timeline.c: the thread's totals over time in its file's header (MALLOC_FREQ_TIMELINE).
 * mf_timeline_start: at the file's making; mf_timeline_look: by the file's thread when its
 * calls_total crossed a multiple of MF_TIMELINE_STEP (f: its file, whose nodes are its trie's;
 * leaf_slots: the slots after each leaf). */
static inline void mf_timeline_start(struct mf_prof_header *h)
{
	if (mf_config.timeline_ms) {
		h->timeline_interval_ns = mf_config.timeline_ms * 1000000ull;
		h->timeline_records = MF_TIMELINE_RECORDS;
	}
}
void mf_timeline_look(struct mf_prof_file *f, unsigned leaf_slots);
/* Whether f's next look may write past the header's first page before its other pages are
 * reserved (mf_prof_reserve_header: a slow step, for the thread's own stack). */
int mf_timeline_wants_room(const struct mf_prof_file *f);

/* process.c: the process record (who the process is, how it ended). Async-signal-safe. */
struct mf_process_real { /* the functions wrapped; NULL until mf_process_init */
	void (*exit)(int) __attribute__((noreturn));
	pid_t (*wait)(int *);
	pid_t (*waitpid)(pid_t, int *, int);
	pid_t (*wait3)(int *, int, struct rusage *);
	pid_t (*wait4)(pid_t, int *, int, struct rusage *);
	int (*waitid)(idtype_t, id_t, siginfo_t *, int);
};
extern struct mf_process_real mf_process_real;
/* At load: the functions wrapped, an on_exit handler (unless record is 0: a copy that stays
 * out of the way only passes the calls on), the program's arguments (the loader's, as it
 * gives them to constructors; argc 0: read /proc/self/cmdline instead). */
void mf_process_init(int argc, char **argv, int record);
/* Directory number n of pid (mf_prof_dir_make's), dir, was just made: its record, and the
 * image this one replaced by exec (if any) marked so. */
void mf_process_created(pid_t pid, unsigned n); /* pid's n-th directory made (fds apart) */
void mf_process_exit(void);		/* exit(): ended (its status: the on_exit handler) */
void mf_process_quick_exit(int status); /* _exit(), _Exit() */
/* exit(2) of the process's last thread, in seccomp strict mode (no clock there: ns is when the
 * end is taken to be). */
void mf_process_confined_exit(int status, uint64_t ns);
/* A call of a thread that has no file (none could be made, or recording stopped): counted in the
 * process record, if this process has one. */
void mf_process_unrecorded(size_t bytes);
void mf_process_count(enum mf_process_counter c, uint64_t n); /* adds n to a counter */
/* Sets a counter, without asking which process this is: for a caller that knows it is the
 * record's (mf_life, in a process whose epoch is set: not a child made without fork()'s
 * handlers; a child made with them forgets the record before it records). */
void mf_process_set(enum mf_process_counter c, uint64_t v);
/* malloc_freq --detach: the record is marked detached, now, and left running; nothing writes
 * it again. */
void mf_process_detach(void);
void mf_process_prefork(void); /* fork(): the child will know its parent by it */
void mf_process_forget(void);  /* in a forked child: the parent's record is not its */
void mf_process_reaped(pid_t pid, int status);	    /* a wait returned a child's status */
void mf_process_reaped_info(const siginfo_t *info); /* waitid's */

/* confine.c: seccomp. A thread in strict mode (asked for through prctl or syscall) may make no
 * system call but read, write, exit and sigreturn, nor read a clock: from then on the
 * profiler makes none in it (every path that could checks mf_confined first), and counts its
 * calls as not recorded. */
extern MF_TLS int mf_confined;
pid_t mf_confine_pid(void);	     /* getpid(), without the system call in strict mode */
void mf_confine_count(size_t bytes); /* a call of a thread in strict mode (slow path) */
/* The thread in strict mode ends (returns from its start function; its key destructors run):
 * its file is finalized in memory. */
void mf_confine_end(void);

/* bpf.c: would the seccomp filter at fprog (the program's struct sock_fprog) let every
 * system call of the profiler's slow steps run, or fail with an errno? 0 also when it cannot
 * be read: *err is then what reading it met (EFAULT: the kernel refuses it so too). */
int mf_bpf_allows(const void *fprog, int *err);

/* tags.c: the process's tag names, by id, and the directory's `tags` file that names them. */
#define MF_TAG_DEPTH 16 /* tags a call's path keeps; deeper pushes are counted, not kept */
/* The id of name (cut at MF_TAG_NAME_LEN - 1 bytes), added if new; MF_TAGS_MAX - 1 when the
 * table is full. Takes a lock: not from a signal handler. */
unsigned mf_tags_intern(const char *name);
/* Writes the names not yet in this process directory's `tags` file (the slow path, before a
 * tag node is made). 0 or -errno. */
int mf_tags_sync(void);

/* sampling.c: the sampling draw. A thread's random state from its seed (MALLOC_FREQ_SEED: by
 * its start order; else the clock, its id and thread, the address of its state); never 0. */
uint64_t mf_sampling_seed(pid_t tid, const void *thread);
/* Calls until the thread's next recorded one, from its random state (1 without sampling). */
long mf_sampling_draw(uint64_t *rng);
void mf_sampling_prefork(void); /* the fork's number, that its child's seeds follow from */
/* In a child: seeds apart from the parent's (by the fork's number if fork()'s handlers ran,
 * else by the pid), and the thread's countdown at 0 (its first call draws). */
void mf_sampling_postfork_child(int handlers);

/* pack.c: ended threads' files packed at a snapshot (malloc_freq_format.h). Only from the
 * snapshot's descriptor task, under its lock (the pack's one writer). The length of process
 * pid's pack: its records end there (0: none). */
uint64_t mf_pack_length(pid_t pid);
/* The ended thread file name of directory dir (open as fd; h: its header, MF_HEADER_SIZE
 * bytes) appended to the pack, the write checked, then the file removed: 1 (the caller packs
 * nothing while lifetimes are on). 0: not one to pack (its file has lifetimes' records, too large,
 * not whole, or packing stopped: also when the pack is not the length written, said once), left as
 * it is. -errno: a step failed, the file stays and the pack is cut back (if that fails too, nothing
 * more is packed in this process: said once); the caller packs no more in this snapshot. A removal
 * that fails with the file gone is one made; 2: it failed and whether the file is there cannot be
 * told: the record stays (packed), and the caller packs no more in this snapshot. */
int mf_pack_file(int dir, int fd, const char *name, const struct mf_prof_header *h, pid_t pid);
/* snapshot.c: a snapshot of every thread's counts (malloc_freq_format.h), labelled (NULL: no
 * label; cut and made safe for a file name), flags MF_SNAPSHOT_*. Returns its number, from 1,
 * or -errno (nothing of it is left then). Blocks signals while it runs; not from inside the
 * profiler. */
long mf_snapshot_take(const char *label, uint32_t flags);
/* flags: the control thread's (signal, interval), which stop once exit() has begun */
#define MF_SNAPSHOT_BACKGROUND 0x80000000u
/* At exit(): waits for a snapshot being taken, and the control thread takes no more (one cut
 * short by the process's end would leave its temporary directory). */
void mf_snapshot_exit(void);
/* control.c: recording switched on and off (the public API, MALLOC_FREQ_START). */
/* mf_wiped.gate (MF_GATE_*, thread.h), 0: a recorded call may take the hot path. The hot
 * path reads it for all of its bits, with the walk's epoch in one word: switching recording
 * off costs it nothing (every call then takes the slow path, which checks mf_control_off).
 * Changed only here (a copy is kept for a child, where the page is wiped): bits set (on) or
 * cleared. */
void mf_gate_set(unsigned bits, int on);
void mf_gate_toggle(unsigned bits); /* async-signal-safe, as mf_gate_set */
/* In a child, whose page is wiped: the gate as the parent had it, no snapshot holding. */
void mf_gate_restore(void);
void mf_control_init(void); /* after mf_config_load */
/* malloc_freq --detach: the control thread, if one runs, ends; returns once it has left. */
void mf_control_stop(void);
/* At the end of the constructor: MALLOC_FREQ_START=off makes the directory now; the signal
 * handlers are installed and the control thread started, if settings ask for them. */
void mf_control_start(void);
/* In a child forked with fork()'s handlers, from its handler: its control thread is to start
 * (mf_control_child) if the parent's did. */
void mf_control_postfork_child(void);
/* The pid of a forked child whose control thread is still to start, or 0. */
extern pid_t mf_control_child;
/* On a thread's first call (mf_control_child set): starts the control thread in that child. */
void mf_control_child_start(void);

/* fds_apart.c: fn(arg), run where the descriptors it opens are never the program's (a task
 * with a descriptor table of its own, sharing all else), or in place where that cannot be;
 * returns what fn returns. Every file the profiler opens once the program runs is opened so.
 * errno is kept. */
long mf_fds_apart(long (*fn)(void *), void *arg);
void mf_fds_apart_init(void); /* at start: in place if the process came with a seccomp filter */
/* A seccomp filter that may forbid what fn does is being installed by this thread: until
 * mf_fds_apart_close_end, fn does not run here (mf_fds_apart returns -EPERM), and other threads'
 * calls wait (a while at most: then -EPERM). */
void mf_fds_apart_close_begin(void);
/* The kernel answered: installed, fn never runs again; refused, it runs as before. */
void mf_fds_apart_close_end(int installed);
void mf_fds_apart_off(void);	 /* from now on in place (a seccomp filter may forbid clone) */
void mf_fds_apart_prefork(void); /* (after mf_modules_prefork) */
void mf_fds_apart_postfork_parent(void);
void mf_fds_apart_postfork_child(void);
void mf_fds_apart_keep(int old, int fd); /* ours in the program's table: old (-1: none) is now fd */
/* Waits until the last task has left the process (before the program's unshare and setns):
 * 1 if there was one that had not been seen to leave. */
int mf_fds_apart_settle(void);

/* Clock id's time in nanoseconds, or 0 if it cannot be read; errno kept. */
static inline uint64_t mf_clock_ns(clockid_t id)
{
	struct timespec ts;
	int saved = errno;
	if (clock_gettime(id, &ts)) {
		errno = saved;
		return 0;
	}
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* spin.c: the profiler's spinlocks (an int: 0 free, 1 held), each held a few instructions at a
 * time. A thread that finds one held spins a little, then gives the processor away, then
 * sleeps 50 us at a time (mf_spin_wait): under SCHED_FIFO a yield gives way only to threads of
 * its own priority, and a holder of lower priority on the same processor would never get to
 * release it. */
void mf_spin_wait(int *lock);
/* That wait, for any word that holds 1 until its holder stores 0 (n: the looks so far, which
 * decide the next step; returned), errno kept. */
unsigned mf_spin_until_zero(const int *word, unsigned n);
static inline void mf_spin_take(int *lock)
{
	if (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
		mf_spin_wait(lock);
}
static inline void mf_spin_give(int *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* pool.c: zeroed memory for a thread state of size bytes (the same every time), or NULL. */
void *mf_pool_take(size_t size);
void mf_pool_give(void *slot);
/* In a child: the pool's lock starts afresh (a thread that held it does not exist there). */
void mf_pool_reset(void);

#endif
