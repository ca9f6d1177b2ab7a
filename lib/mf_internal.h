/* Internal declarations of libmalloc_freq: attribute macros and the interfaces between the
 * library's modules. Everything here runs inside the host's allocation calls: no malloc, no
 * stdio, no exit; errno is the caller's to keep. */
#ifndef MF_INTERNAL_H
#define MF_INTERNAL_H

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "malloc_freq_format.h"

#define MF_EXPORT      __attribute__((visibility("default")))
#define MF_NOINLINE    __attribute__((noinline))
#define MF_TLS	       __thread __attribute__((tls_model("initial-exec")))
#define mf_likely(x)   __builtin_expect(!!(x), 1)
#define mf_unlikely(x) __builtin_expect(!!(x), 0)

#define MF_DEPTH_DEFAULT 128
#define MF_DEPTH_MAX	 1024

/* Fresh anonymous memory about to be used: written first, each page faults in once (read
 * first, it faults twice: in comes the zero page, then a copy of it). A page fault costs as
 * much as two thousand instructions, and a short process's profiler touches few pages. */
static inline void mf_pages_touch(void *p, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		((volatile char *)p)[i] = 0;
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

/* dl_iterate_phdr with every signal blocked: it holds the loader's lock, and a program's
 * signal handler that walked the loaded objects too (libunwind does, in unw_backtrace) would
 * wait on that lock for ever. The profiler's own walks all go through here. */
static inline int mf_objects_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = dl_iterate_phdr(cb, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* config.c: settings from the environment, read once at start. */
struct mf_config {
	char dir[MF_PATH_LEN]; /* absolute directory the profile directory goes into */
	unsigned depth;	       /* frames kept per stack */
	uint64_t sample;       /* record on average one call in this many; 1: every call */
	double sample_log;     /* log(1 - 1/sample), for drawing geometric intervals */
	uint64_t seed;	       /* with have_seed: sampling is reproducible */
	int have_seed;
	int unwind;		 /* enum mf_unwind_mode */
	char cache[MF_PATH_LEN]; /* directory of the rule cache; empty: none */
};
enum mf_unwind_mode {
	MF_UNWIND_CACHED,    /* rules confirmed by libunwind, walked without it */
	MF_UNWIND_LIBUNWIND, /* unw_backtrace for every capture */
	MF_UNWIND_CHECK,     /* cached, and every capture compared with unw_backtrace */
};
extern struct mf_config mf_config;
void mf_config_load(void);

/* ln(1 + x) for |x| <= 1/2, to within a few units in the last place, as 2 atanh(x / (2 + x)):
 * its series gains at least a factor 9 per term. (libm would be one more library for every
 * process to load, for two logarithms.) */
static inline double mf_ln1p(double x)
{
	double s = x / (2 + x), s2 = s * s, term = s, sum = s;
	for (int k = 3; k < 80; k += 2) {
		term *= s2;
		double add = term / k;
		if (add == 0 || (add < 0 ? -add : add) < 0x1p-60 * (sum < 0 ? -sum : sum))
			break;
		sum += add;
	}
	return 2 * sum;
}

/* log.c: one line on stderr, with write(2); never allocates. */
void mf_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* mf_log the first time this line is reached in the process, never again. */
#define MF_LOG_ONCE(...)                                                                           \
	do {                                                                                       \
		static int said_;                                                                  \
		if (!__atomic_exchange_n(&said_, 1, __ATOMIC_RELAXED))                             \
			mf_log(__VA_ARGS__);                                                       \
	} while (0)
/* Formats like snprintf for %s %d %u %lu %lx %zu only; never allocates. Returns the length. */
int mf_format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* real.c: the next allocator in the lookup order. Until mf_real_init() the pointers lead to a
 * small static bootstrap arena, so they are never NULL. */
struct mf_real {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void (*free)(void *);
	int (*dlclose)(void *);
	int (*dl_iterate_phdr)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
};
extern struct mf_real mf_real;
/* Returns 0, or -1 when an allocation function could not be found (then the bootstrap arena
 * keeps serving and recording stays off). */
int mf_real_init(void);
int mf_real_is_bootstrap(const void *p);
/* realloc of a bootstrap block: moves it to the real allocator. */
void *mf_real_move_bootstrap(void *p, size_t size);
/* An allocation the profiler makes through another library (the loader's, loading libunwind;
 * libunwind's per-thread block): from the bootstrap arena while it lasts, so that the program's
 * heap is laid out as it would be without the profiler. align: 0 for malloc's. */
void *mf_real_own(size_t align, size_t n, int zero);
void mf_real_free_bootstrap(void *p); /* free() of a bootstrap block: kept for mf_real_own */
void *mf_real_own_realloc(void *old, size_t n);

/* unwind.c: the only user of libunwind. */
struct mf_frame;
struct mf_cfi_rule;
/* Loads libunwind, unless the rule cache says this run will not need it (mf_rules_complete).
 * After mf_rules_init. */
void mf_unwind_init(void);
/* Captures the program's return addresses from frame `from` outwards into ws and returns how
 * many: *pcs points at them, outermost first, without libmalloc_freq's own frames; the
 * capture ends at the first address that cannot be code. *hash is their mf_stack_hash_step
 * fold, or 0 if not known. max bounds the raw capture, our frames included. scratch (max
 * entries) is used by MALLOC_FREQ_UNWIND=check. */
struct mf_walk_stacks;
int mf_unwind(struct mf_walk_stacks *ws, void **scratch, int max, const struct mf_frame *from,
	      void ***pcs, uint64_t *hash);
/* Does libunwind, stepping from the frame of return address pc (registers sp, bp), reach the
 * caller (or the end of the stack) that rule leads to? 1 or 0; -1 if libunwind was not
 * loaded in this run. */
int mf_unwind_agrees(uintptr_t pc, uintptr_t sp, uintptr_t bp, const struct mf_cfi_rule *rule);
void mf_unwind_report(void); /* at exit, MALLOC_FREQ_UNWIND=check: what it compared */
/* MALLOC_FREQ_UNWIND=check: the leaf a recent stack gave, against the checked walk's. */
void mf_unwind_check_recent(uint32_t recent, uint32_t walked);

/* cfi.c: how to reach a frame's caller, from the object's .eh_frame. */
enum { MF_CFI_UNKNOWN, MF_CFI_STEP, MF_CFI_END };
struct mf_cfi_rule {
	int32_t cfa_off; /* CFA = (cfa_rbp ? rbp : rsp) + cfa_off; the return address at CFA - 8 */
	int16_t rbp_off; /* the caller's rbp is saved at CFA + rbp_off; 0: rbp is unchanged */
	uint8_t cfa_rbp;
	uint8_t kind; /* MF_CFI_END: the outermost frame; MF_CFI_UNKNOWN: ask libunwind */
};
/* The rule at pc (an address inside the instruction: a return address minus one). 0; -1
 * when the frame is not of the simple kinds understood here; MF_CFI_NONE when no unwind
 * table covers pc. Every field of *rule is set (kind MF_CFI_UNKNOWN unless 0 is returned). */
enum { MF_CFI_NONE = -2 };
int mf_cfi_find(uintptr_t pc, struct mf_cfi_rule *rule);

/* walk.c: the cached unwinder. Rules live in a process-wide table keyed by return address,
 * holding rules that gave libunwind's answer (mf_unwind_agrees, or an earlier run's: rules.c;
 * in a run without libunwind, rules as read); walking needs no lock. */
/* The hash of a stack, folded from its outermost frame in: the trie's memo key. */
#define MF_STACK_HASH_SEED 0x2545f4914f6cdd1dull
static inline uint64_t mf_stack_hash_step(uint64_t h, uintptr_t pc)
{
	h = (h ^ pc) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* A frame as the cached walk sees it: the return address into it, and the registers it
 * left (sp just above the return address; rbp as it was). */
struct mf_frame {
	uintptr_t pc, sp, bp;
	uintptr_t caller; /* the entry point's own return address: where the program called */
};
/* A thread's last stack as the walk saw it, outermost frame first: frame i entered with pc[i],
 * f[i].sp and f[i].bp and left by f[i].rule; f[i].hash folds pc[0] to pc[i] in turn. The
 * fresh arrays take a walk's new frames, innermost first, until it knows where they go. */
struct mf_walk_frame {
	uintptr_t sp, bp;
	uint64_t rule, hash;
};
struct mf_walk_stacks {
	uintptr_t pc[MF_DEPTH_MAX + 16]; /* (apart from f: the trie reads them as an array) */
	struct mf_walk_frame f[MF_DEPTH_MAX + 16];
	uintptr_t fresh_pc[MF_DEPTH_MAX + 16];
	struct mf_walk_frame fresh[MF_DEPTH_MAX + 16];
	uint64_t epoch;
	int count;    /* frames in pc and f */
	int reusable; /* the stack ended at its outermost frame, under epoch */
};
/* Walks from the frame of return address pc and returns the frame count: ws->pc[0..count)
 * holds the return addresses, outermost first (pc last). A return address new to the table
 * has its rule read (cfi.c) and confirmed (mf_unwind_agrees) first. Where a frame is one of
 * the last stack's and nothing above it has changed, the frames above are kept. When a frame
 * needs libunwind, MF_WALK_SLOW is returned and ws->pc is left as it was. */
enum { MF_WALK_SLOW = -2 };
int mf_walk(struct mf_walk_stacks *ws, int max, uintptr_t pc, uintptr_t sp, uintptr_t bp);
/* The walk's epoch: the rules (and the stacks walked with them) of another are not used. */
unsigned mf_walk_epoch_now(void);
/* One word of a walked stack, and what it held then. */
struct mf_walk_check {
	const uintptr_t *at;
	uintptr_t was;
};
/* For the stack ws holds after a complete walk: the words, innermost first, whose values
 * decide where a new walk from its first frame goes (each frame's return address, and its
 * rbp where a rule further out uses it), up to max of them; *bp_mask is ~0 if the first
 * frame's rbp is used, else 0. Returns how many, or -1 if more than max. Read innermost
 * first, each lies in a frame the words before it have shown to be the same. */
int mf_walk_checks(const struct mf_walk_stacks *ws, struct mf_walk_check *c, int max,
		   uintptr_t *bp_mask);
/* Defines the function `name(a, b, c)` that calls target(a, b, pc, sp, bp, c) with the frame
 * of name's caller as it will be once name returns (a, b, c: integers or pointers). */
#define MF_WITH_CALLER_FRAME(name, target)                                                         \
	__asm__(".text\n.p2align 4\n.type " #name ", @function\n" #name ":\n"                      \
		".cfi_startproc\n"                                                                 \
		"movq %rdx, %r9\n"     /* c */                                                     \
		"movq (%rsp), %rdx\n"  /* pc: the return address */                                \
		"leaq 8(%rsp), %rcx\n" /* sp once returned */                                      \
		"movq %rbp, %r8\n"     /* bp, untouched here */                                    \
		"jmp " #target "\n"                                                                \
		".cfi_endproc\n.size " #name ", .-" #name "\n")
/* Everything cached may be wrong from now on (code may be unloaded and other code mapped). */
void mf_walk_init(void);
void mf_walk_forget(void);
void mf_walk_postfork_child(void);

/* recent.c: a thread's recent stacks, each with the trie leaf it was counted at; a call
 * from one of them again is counted there once its words are seen unchanged, without a walk
 * or the trie. Filled only from complete walks, under MALLOC_FREQ_UNWIND=cached. The stacks
 * are laid one after the other in an arena (a short process touches a page or two of it),
 * which starts over when full; an index of sets of two ways finds them. */
enum {
	MF_RECENT_SETS = 32,
	MF_RECENT_WAYS = 2,
	MF_RECENT_CHECKS = 254, /* a stack that needs more is not kept */
	MF_RECENT_ARENA = 16 << 10,
};
struct mf_recent_stack {
	uintptr_t pc, sp, bp, bp_mask; /* the first frame: the entry point's own */
	unsigned epoch;		       /* mf_walk_epoch_now() of the walk */
	uint32_t node;		       /* the trie leaf */
	int entry;		       /* enum mf_entry */
	int checks;
	struct mf_walk_check check[];
};
struct mf_recent {
	struct mf_recent_stack *way[MF_RECENT_SETS][MF_RECENT_WAYS]; /* NULL: none */
	unsigned char next[MF_RECENT_SETS];			     /* the way to replace next */
	size_t used;						     /* bytes of arena */
	unsigned char *arena; /* MF_RECENT_ARENA bytes, 16-aligned (apart: its pages are
				 touched only as it fills) */
};
/* The leaf of the stack of a call made now from frame `from`, or 0 if not a recent one. */
uint32_t mf_recent_find(const struct mf_recent *r, int entry, const struct mf_frame *from);
/* Keeps the stack ws holds after a complete walk, counted at node. */
void mf_recent_put(struct mf_recent *r, const struct mf_walk_stacks *ws, int entry, uint32_t node);

/* rules.c: the rule cache, frame rules libunwind confirmed in earlier runs of the program. */
void mf_rules_init(void); /* after mf_modules_init: reads the file */
void mf_rules_save(void); /* at exit: adds this run's confirmations to the file */
int mf_rules_on(void);	  /* there is a cache to look in and add to */
/* The program's last run needed nothing from libunwind beyond the rules in the file. */
int mf_rules_complete(void);
/* This run needed libunwind beyond what the cache spares (it was not loaded, a stack went to
 * unw_backtrace, a rule was refused or could not be kept): the next one must load it. */
void mf_rules_needed(void);
/* The key of a rule (mf_walk_pack with epoch 0) at rel_pc in the module of identity module
 * (mf_modules_identity). Never 0. */
uint64_t mf_rules_key(uint64_t module, uint64_t rel_pc, uint64_t rule);
int mf_rules_known(uint64_t key); /* libunwind confirmed it in an earlier run */
void mf_rules_add(uint64_t key);  /* libunwind confirmed it in this run */

/* modules.c: the process's module map, in memory and in the file `modules`. */
void mf_modules_init(void);
/* Maps pc to (module index, rel_pc); MF_MODULE_NONE when nothing maps it. Takes a lock. */
uint32_t mf_modules_resolve(uintptr_t pc, uint64_t *rel_pc);
/* Rescans the loaded objects (after dlclose) and rewrites the file. */
void mf_modules_refresh(void);
/* Writes the map into the process directory (after it was created). */
void mf_modules_write(void);
int mf_modules_is_self(uintptr_t pc); /* pc lies in libmalloc_freq itself */
/* A hash of the build-id of the module that holds pc (0: none, or it has no build-id), and
 * pc's offset from the module's load bias in *rel_pc. Takes the lock. */
uint64_t mf_modules_identity(uintptr_t pc, uint64_t *rel_pc);
/* The main program's build-id in hex (out: 2 * MF_BUILD_ID_LEN + 1 bytes); 0, or -1 if none. */
int mf_modules_main_build_id(char *out);
extern volatile unsigned mf_modules_generation; /* bumped when an object is unloaded */
void mf_modules_prefork(void);
void mf_modules_postfork(void);
void mf_modules_reset(void); /* in a child whose parent's threads may have held the lock */

/* loader.c: the dynamic loader's write lock, as a forked child inherited it. */
void mf_loader_init(void);
void mf_loader_postfork_child(void); /* sets mf_loader_stuck */
/* In a child forked while another thread held the loader's lock: dl_iterate_phdr (and so
 * unwinding, and looking at the loaded objects) would wait for ever. */
extern int mf_loader_stuck;

/* trie.c: the stack trie over a node array that the owner may grow. */
struct mf_trie;
typedef struct mf_node *(*mf_trie_grow_fn)(void *arg, uint64_t *capacity);
typedef void (*mf_trie_resolve_fn)(uintptr_t pc, struct mf_node *node);
struct mf_trie {
	struct mf_node *nodes;
	uint64_t capacity;
	uint64_t *count; /* where node_count is published (the file header) */
	struct mf_trie_slot *index;
	struct mf_trie_memo *memo;
	uint64_t memo_mask;
	uint64_t memo_added; /* stacks put in the memo since it was made */
	uint64_t index_mask;
	uint64_t index_used;
	mf_trie_grow_fn grow;
	mf_trie_resolve_fn resolve;
	void *grow_arg;
};
/* Key values below any real pc: the leaf of an entry point and the truncation marker. */
#define MF_TRIE_KEY_ENTRY(e)	((uintptr_t)(e) + 1)
#define MF_TRIE_KEY_TRUNCATED	((uintptr_t)64)
#define MF_TRIE_KEY_SPECIAL_MAX ((uintptr_t)4096)
/* Sets up the trie over nodes[0..capacity) with *count == 0; writes the root. 0 or -1. */
int mf_trie_init(struct mf_trie *t, struct mf_node *nodes, uint64_t capacity, uint64_t *count,
		 mf_trie_grow_fn grow, mf_trie_resolve_fn resolve, void *grow_arg);
void mf_trie_destroy(struct mf_trie *t);
/* The child of parent for pc, created if absent. Returns its index, or 0 when the node array
 * could not grow (the call then goes uncounted in the trie). */
uint32_t mf_trie_child(struct mf_trie *t, uint32_t parent, uintptr_t pc);
/* The leaf for a whole stack: the truncation marker if truncated, then pcs[0] (outermost) to
 * pcs[n-1], then leaf (an entry key); created if absent. 0 when the array could not grow.
 * hash: the pcs' mf_stack_hash_step fold from pcs[0] if the caller has it, else 0. */
uint32_t mf_trie_stack(struct mf_trie *t, void *const *pcs, int n, int truncated, uintptr_t leaf,
		       uint64_t hash);
/* Forgets the pc index (not the nodes): after an unload, pcs may name other code. */
void mf_trie_forget_index(struct mf_trie *t);

/* profile_file.c: the process directory and the per-thread files. */
struct mf_prof_file {
	struct mf_prof_header *header; /* one page; never moves */
	struct mf_node *nodes;	       /* grows with mremap */
	uint64_t capacity;
	dev_t dev;
	ino_t ino;
	int grow_failed; /* the file could not grow once: do not retry for every new node */
	char path[MF_PATH_LEN];
};
/* Creates the process directory if this process has none yet; 0 or -errno. */
int mf_prof_dir_ensure(void);
const char *mf_prof_dir(void);
int mf_prof_dir_mine(void);    /* the directory is this process's (not a forked parent's) */
void mf_prof_dir_forget(void); /* in a forked child: the next file goes into a new directory */
int mf_prof_open(struct mf_prof_file *f, pid_t tid); /* 0 or -errno */
/* 0 if a file may grow to size without the kernel sending SIGXFSZ (RLIMIT_FSIZE); -EFBIG. */
int mf_prof_size_allowed(off_t size);
struct mf_node *mf_prof_grow(void *file, uint64_t *capacity); /* an mf_trie_grow_fn */
void mf_prof_close(struct mf_prof_file *f);
void mf_prof_finalize(struct mf_prof_header *h, uint32_t state, pid_t tid);

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
/* At load: the functions wrapped, an on_exit handler, the program's arguments (the loader's,
 * as it gives them to constructors; argc 0: read /proc/self/cmdline instead). */
void mf_process_init(int argc, char **argv);
/* Directory number n of pid (mf_prof_dir_make's), dir, was just made: its record, and the
 * image this one replaced by exec (if any) marked so. */
void mf_process_created(const char *dir, pid_t pid, unsigned n);
void mf_process_exit(void);		/* exit(): ended (its status: the on_exit handler) */
void mf_process_quick_exit(int status); /* _exit(), _Exit() */
void mf_process_forget(void);		/* in a forked child: the parent's record is not its */
void mf_process_reaped(pid_t pid, int status);	    /* a wait returned a child's status */
void mf_process_reaped_info(const siginfo_t *info); /* waitid's */

/* thread.c: per-thread state. */
struct mf_thread;
struct mf_tls {
	long countdown;		  /* calls until the next recorded one; <= 0: record now */
	unsigned depth;		  /* > 0: an entry point is running in this thread */
	unsigned recording;	  /* > 0: the profiler itself is running in this thread */
	unsigned disabled;	  /* recording stopped for this thread (or it has ended) */
	unsigned fork_held;	  /* this call holds mf_fork_lock for reading */
	struct mf_thread *thread; /* NULL until the thread's first call */
	unsigned own;		  /* > 0: allocations now are the profiler's own (mf_real_own) */
};
extern MF_TLS struct mf_tls mf_tls;
/* Brackets the profiler's own work outside an entry point (init, dlclose, exit), and the
 * program's dl_iterate_phdr: allocations in between are counted apart, not recorded. */
static inline void mf_busy_enter(void)
{
	mf_tls.depth++;
	mf_tls.recording++;
}
static inline void mf_busy_leave(void)
{
	mf_tls.recording--;
	mf_tls.depth--;
}
void mf_thread_init(void);
/* NULL: this thread does not record. Otherwise mf_tls.countdown holds the first interval. */
struct mf_thread *mf_thread_start(void);
void mf_thread_record(struct mf_thread *t, enum mf_entry e, size_t bytes,
		      const struct mf_frame *from);
void mf_thread_count_nested(void);
void mf_thread_process_exit(void);

/* Held for reading while the profiler calls libunwind, looks at the loaded objects, takes
 * one of its locks or creates or grows a file; for writing across fork(): so no thread holds
 * such a lock (its own, libunwind's, the loader's) when the child is made. Writer-preferring,
 * so a fork is not starved by allocating threads. A recorded call whose stack, rules and trie
 * nodes are all known takes none of those steps, and does not take this lock either: each
 * slow step calls mf_fork_hold() first, and the entry point releases it at the end. */
extern pthread_rwlock_t mf_fork_lock;
/* fork_held is set before the lock is taken and cleared after it is given back, so that a
 * signal handler's fork in between knows this thread may hold it. */
static inline void mf_fork_hold(void)
{
	if (!mf_tls.fork_held) {
		mf_tls.fork_held = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		pthread_rwlock_rdlock(&mf_fork_lock);
	}
}
static inline void mf_fork_release(void)
{
	pthread_rwlock_unlock(&mf_fork_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mf_tls.fork_held = 0;
}

/* The profiler's slow paths open, write and close files: cancellation points that must not
 * make malloc one. */
static inline int mf_nocancel_begin(void)
{
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}
static inline void mf_nocancel_end(int old)
{
	pthread_setcancelstate(old, &old);
}

#endif
