/* Internal declarations of libmalloc_freq: attribute macros and the interfaces between the
 * library's modules. Everything here runs inside the host's allocation calls: no malloc, no
 * stdio, no exit; errno is the caller's to keep. The files of lib/, one concept each:
 *   interpose.c   the allocation entry points, dlclose, dl_iterate_phdr, the constructor
 *   exits.c       _exit, _Exit, the wait family: the process record told how a process ended
 *   identity.c    set*uid, chroot, unshare, setns: the files readied for who the process becomes
 *   real.c        the next allocator and the bootstrap arena
 *   loader_alloc.c  the loader's allocations for the profiler, kept out of the program's heap
 *   thread.c      thread state, start and exit, the snapshot copy protocol, the counters
 *   sampling.c    the sampling draw: random numbers, the countdown's next value
 *   fork.c        the fork lock, each module's prefork and postfork in order, a child's reset
 *   cpu_clock.c   a thread's CPU time for MALLOC_FREQ_WEIGHT=time (own header, cpu_clock.h)
 *   pool.c        the slots thread states live in
 *   trie.c        the stack trie
 *   profile_file.c  the process directory and the per-thread files
 *   process.c     the process record; process_end.c: a child's end as its parent writes it
 *   modules.c     the module map;  loader.c: the dynamic loader's lock, watched
 *   objects.c     the loaded object at an address: _dl_find_object, or a table of its own
 *   compat.h      stand-ins for what glibc after 2.28 brought (gettid, strerrordesc_np, ...)
 *   rebind.c      slots that reach an allocator past the entry points, pointed at stubs
 *   got.c         an object's GOT and PLT slots;  namespaces.c: dlmopen's namespaces
 *   fds_apart.c   files opened in a descriptor table of their own
 *   confine.c     prctl and syscall: seccomp strict mode;  bpf.c: a filter read and run
 *   config.c, parse.c  the settings;  control.c: the public API, signals, the control thread
 *   snapshot.c    snapshot directories;  tags.c: tag names and the `tags` file
 *   log.c         lines on stderr;  write_all.c: a buffer written whole;  format.c: snprintf
 *   spin.c        the spinlocks' wait
 *   unwind/, life/  stack capture and lifetimes (maps in their internal.h) */
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

/* real.c: the next allocator in the lookup order. Until mf_real_init() the pointers lead to a
 * small static bootstrap arena, so they are never NULL. */
struct mf_real {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*realloc_first)(void *, size_t); /* the first in the lookup order (reallocarray's) */
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void (*free)(void *);
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
/* Is fn a function of this copy of the library? (dladdr: not inside malloc.) */
int mf_real_ours(void *fn);
void *mf_real_own_realloc(void *old, size_t n);

/* modules.c: the process's module map, in memory and in the file `modules`. */
void mf_modules_init(void);
/* Maps pc to (module index, rel_pc); MF_MODULE_NONE when nothing maps it. Without a lock
 * unless pc lies in an object loaded since the map was last made: then it takes the fork lock
 * (for good: the entry point gives it back), rescans the loaded objects and rewrites the
 * file. */
uint32_t mf_modules_resolve(uintptr_t pc, uint64_t *rel_pc);
/* The same without a lock or a call, if pc lies in the module this thread resolved last
 * (then 1), else 0. */
int mf_modules_resolve_last(uintptr_t pc, uint32_t *module, uint64_t *rel_pc);
/* Rescans the loaded objects (after dlclose) and rewrites the file. */
void mf_modules_refresh(void);
/* Writes the map into the process directory (after it was created). */
void mf_modules_write(void);
int mf_modules_is_self(uintptr_t pc); /* pc lies in libmalloc_freq itself */
/* The address range of the module that holds pc (all its PT_LOAD segments); 0, or -1 if none
 * does. As mf_modules_resolve. */
int mf_modules_range(uintptr_t pc, uintptr_t *start, uintptr_t *end);
/* A hash of the build-id of the module that holds pc (0: none, it has no build-id or no unwind
 * table, or the loader has another object there now), and pc's offset from the module's load
 * bias in *rel_pc. As mf_modules_resolve. */
uint64_t mf_modules_identity(uintptr_t pc, uint64_t *rel_pc);
/* The main program's build-id in hex (out: 2 * MF_BUILD_ID_LEN + 1 bytes); 0, or -1 if none. */
int mf_modules_main_build_id(char *out);
extern volatile unsigned mf_modules_generation; /* bumped when an object is unloaded */
void mf_modules_prefork(void);
void mf_modules_postfork(void);
void mf_modules_reset(void); /* in a child whose parent's threads may have held the lock */

/* loader_alloc.c: where the loader's own allocator pointers lead not to the profiler's entry
 * points (a program's own malloc, an allocator preloaded before the profiler), they are led
 * through forwarders that serve the profiler's own allocations (mf_tls.own) from the bootstrap
 * arena: the loader's work for the profiler (loading libunwind, the threads it starts) stays
 * out of the program's allocator. Once, at start. */
void mf_loader_alloc_take(void);

/* objects.c: the loaded object at an address, without a lock: glibc's _dl_find_object where
 * it has one, else a table made from dl_iterate_phdr (MALLOC_FREQ_FIND_OBJECT=table forces
 * it). Its whole address range, and its .eh_frame_hdr (0 if none). */
struct mf_object {
	uintptr_t start, end, eh_frame;
};
void mf_objects_init(void); /* after mf_loader_init */
/* 0 and *out: the object loaded at pc; 1: none; -1: cannot tell now. No lock, no system call;
 * the table is as last made (at start, or by mf_objects_find_current). */
int mf_objects_find(uintptr_t pc, struct mf_object *out);
/* The same, as the loader has it now: the table is made again first if the loader loaded or
 * unloaded anything since (asking takes the loader's lock, as dl_iterate_phdr does). */
int mf_objects_find_current(uintptr_t pc, struct mf_object *out);
/* Do the answers come from the loader, which knows every namespace's objects (the table knows
 * the base namespace's only)? Not without _dl_find_object, or with MALLOC_FREQ_FIND_OBJECT=table.
 */
int mf_objects_loader_knows(void);
/* The loader's counters of objects loaded and unloaded, as dl_iterate_phdr gives them (which
 * takes the loader's lock): what changed since they were last read. */
void mf_objects_counters(unsigned long long c[2]);

/* loader.c: the dynamic loader's write lock, as a forked child inherited it, and as the
 * calling thread holds it. */
void mf_loader_init(void);
void mf_loader_postfork_child(void); /* sets mf_loader_stuck */
/* Does the calling thread hold the loader's write lock (inside a program's dl_iterate_phdr
 * callback, or after leaving one by longjmp)? sp: the program's stack pointer at the call
 * (where the lock could not be found, a call below the program's dl_iterate_phdr is taken to
 * be in its callback). Then another thread may wait for that lock while it holds libunwind's
 * or the fork lock for reading: the thread's slow steps use neither libunwind nor wait for a
 * fork (mf_tls.loader_held). Without a lock or a system call but the first time in a thread,
 * and only while some thread holds the lock. */
int mf_loader_held(uintptr_t sp);
/* The program's dl_iterate_phdr, by real (the lock held meanwhile is watched). */
typedef int mf_loader_iterate_fn(int (*)(struct dl_phdr_info *, size_t, void *), void *);
int mf_loader_iterate(mf_loader_iterate_fn *real, int (*cb)(struct dl_phdr_info *, size_t, void *),
		      void *arg);
/* In a child forked while another thread held the loader's lock: dl_iterate_phdr (and so
 * unwinding, and looking at the loaded objects) would wait for ever. */
extern int mf_loader_stuck;

/* got.c: an object's relocated references to named symbols: its GOT and PLT slots
 * (MF_ARCH_R_GLOB_DAT, MF_ARCH_R_JUMP_SLOT) and its absolute addresses (MF_ARCH_R_ABS64, addend
 * 0; lib/arch/). */
struct mf_got_object {
	uintptr_t bias;
	const ElfW(Dyn) * dyn;
	uintptr_t start, end;	      /* its loaded segments */
	uintptr_t relro_lo, relro_hi; /* the pages the loader made read-only after relocating */
};
int mf_got_object(const struct dl_phdr_info *info, struct mf_got_object *o); /* 0, or -1 */
/* fn(slot, name, sym, type, arg) for each such reference, until fn returns nonzero (that is
 * returned); -1 if the object's tables cannot be found. */
typedef int mf_got_fn(void **slot, const char *name, const ElfW(Sym) * sym, unsigned type,
		      void *arg);
int mf_got_each(const struct mf_got_object *o, mf_got_fn *fn, void *arg);
/* *slot = value, through the read-only protection of RELRO (put back after); 0, or -1 (not
 * written). Not from a dl_iterate_phdr callback: it takes the fork lock. */
int mf_got_write(const struct mf_got_object *o, void **slot, void *value);

/* namespaces.c: the loader's namespaces besides the base one (dlmopen), whose objects
 * dl_iterate_phdr shows only to code loaded there. */
#define MF_NAMESPACES_MAX 16	/* glibc's DL_NNS */
int mf_namespaces_any(void);	/* another namespace was made (no lock) */
int mf_namespaces_listed(void); /* glibc lists its namespaces (2.35 on): else none is seen */
/* The mapping of the object that holds address at (any namespace's; no lock): 0; -1 when no
 * object holds it; 1 when this glibc cannot tell (no _dl_find_object: the base namespace's
 * objects are found in objects.c's table, brought up to date under the loader's lock). */
int mf_namespaces_mapped(const void *at, const void **start, const void **end);
/* With the loader's lock held (in a dl_iterate_phdr callback): each namespace's first object
 * (NULL: an emptied one), the base namespace's first; at most max; returns how many. */
int mf_namespaces_heads(struct link_map **heads, int max);
/* With the loader's lock held: object l as dl_iterate_phdr reports one (its program headers
 * read from its ELF header; its thread-local storage left out); 0, or -1. */
int mf_namespaces_info(const struct link_map *l, struct dl_phdr_info *info);
/* With the loader's lock held: how many objects all namespaces hold. */
unsigned long long mf_namespaces_loaded(void);
/* As mf_objects_iterate, over the objects of every namespace, the base one's first. */
int mf_objects_each(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg);

/* rebind.c: objects that reach an allocator past the entry points (a library opened with
 * RTLD_DEEPBIND, every object of a namespace made by dlmopen) have their GOT slots for it
 * pointed at entry points that forward to it, once the loader has loaded them. */
void mf_rebind_init(void); /* at start: watches the loader's dlopen */
/* The frame of a dlopen of the calling thread's that is watched now (its slots rebound once the
 * loader returns), or 0 (or, after the loader's error, the last, left by its longjmp). */
extern MF_TLS uintptr_t mf_rebind_watched;
/* interpose.c: the entry points by their own addresses: malloc, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, free. */
#define MF_ENTRY_OWN_COUNT 10
extern void *const mf_entry_own[MF_ENTRY_OWN_COUNT];
/* An allocator the entry points of interpose.c forward to (mf_next_malloc, ...). */
struct mf_next {
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

/* The hash of a stack, folded from its outermost frame in: the trie's memo key. */
#define MF_STACK_HASH_SEED 0x2545f4914f6cdd1dull
static inline uint64_t mf_stack_hash_step(uint64_t h, uintptr_t pc)
{
	h = (h ^ pc) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* trie.c: the stack trie over a node array that the owner may grow. */
struct mf_trie;
typedef struct mf_node *(*mf_trie_grow_fn)(void *arg, uint64_t *capacity);
typedef void (*mf_trie_resolve_fn)(uintptr_t pc, struct mf_node *node);
struct mf_trie_slot {
	uintptr_t pc;
	uint32_t parent;
	uint32_t node; /* 0: empty (the root is nobody's child) */
};
/* A stack's leaf, by a 64-bit hash of its keys; the frame count and both ends are checked
 * too, so a wrong leaf would need all of them to agree. */
struct mf_trie_memo {
	uint64_t hash;
	uintptr_t inner, outer;
	uint32_t node;	/* 0: empty */
	uint32_t shape; /* frames, and 1 << 31 if truncated */
};
#define MF_TRIE_INDEX_MIN      256 /* one page */
#define MF_TRIE_INDEX_ROOM     8192
#define MF_TRIE_MEMO_FIRST     128
#define MF_TRIE_MEMO_SLOTS     1024
#define MF_TRIE_PATH_HASH_ROOM 8192
#define MF_TRIE_AHEAD	       7 /* index lines asked for ahead of a stack's lookups */
/* Where a trie's index, memo and path hashes grow before they need mappings of their own (in
 * the owner's memory, touched as used): the memo's full size, the index's successive sizes
 * from MF_TRIE_INDEX_MIN to MF_TRIE_INDEX_ROOM slots one after the other, and the path
 * hashes of the first MF_TRIE_PATH_HASH_ROOM node slots. */
struct mf_trie_room {
	_Alignas(4096) struct mf_trie_slot index[2 * MF_TRIE_INDEX_ROOM - MF_TRIE_INDEX_MIN];
	struct mf_trie_memo memo[MF_TRIE_MEMO_SLOTS];
	uint32_t path_hash[MF_TRIE_PATH_HASH_ROOM];
};
struct mf_trie {
	struct mf_node *nodes;
	uint64_t capacity;
	uint64_t *count;	   /* where node_count is published (the file header) */
	struct mf_trie_room *room; /* NULL: index and memo in mappings of their own */
	struct mf_trie_slot *index;
	struct mf_trie_memo *memo;
	uint64_t memo_mask;
	uint64_t memo_added; /* stacks put in the memo since it was made */
	uint64_t index_mask;
	uint64_t index_used;
	uint32_t *path_hash; /* per node slot: the hash of its path, its place in the index */
	uint64_t path_hash_cap;
	mf_trie_grow_fn grow;
	mf_trie_resolve_fn resolve;
	void *grow_arg;
	uint32_t leaf_slots; /* slots after a leaf: its records (MF_LEAF_SLOTS by default) */
	uint32_t root;	     /* where stacks start: 0, or the node of the owner's tag path */
};
/* Key values below any real pc: the leaf of an entry point and the truncation marker. */
#define MF_TRIE_KEY_ENTRY(e)	((uintptr_t)(e) + 1)
#define MF_TRIE_KEY_TRUNCATED	((uintptr_t)64)
#define MF_TRIE_KEY_WEIGHT	((uintptr_t)100)	/* a leaf's time (MF_MODULE_WEIGHT) */
#define MF_TRIE_KEY_SIZES	((uintptr_t)101)	/* under a leaf: its dense size histogram */
#define MF_TRIE_KEY_TAG(id)	((uintptr_t)128 + (id)) /* a tag scope, id < MF_TAGS_MAX */
#define MF_TRIE_KEY_SPECIAL_MAX ((uintptr_t)4096)
_Static_assert(128 + MF_TAGS_MAX <= 4096, "tag keys lie below any pc");
/* Sets up the trie over nodes[0..capacity) with *count == 0; writes the root. 0 or -1.
 * room: where its index and memo grow first, or NULL. */
int mf_trie_init(struct mf_trie *t, struct mf_trie_room *room, struct mf_node *nodes,
		 uint64_t capacity, uint64_t *count, mf_trie_grow_fn grow,
		 mf_trie_resolve_fn resolve, void *grow_arg);
void mf_trie_destroy(struct mf_trie *t);
/* The child of parent for pc, created if absent. Returns its index, or 0 when the node array
 * could not grow (the call then goes uncounted in the trie). */
uint32_t mf_trie_child(struct mf_trie *t, uint32_t parent, uintptr_t pc);
/* The leaf for a whole stack: the truncation marker if truncated, then pcs[0] (outermost) to
 * pcs[n-1], then leaf (an entry key); created if absent. 0 when the array could not grow.
 * hash: the pcs' mf_stack_hash_step fold from pcs[0] if the caller has it, else 0.
 * path (n entries, or NULL): path[0..*known) are the nodes of pcs[0..*known), as the caller
 * found them before (*known 0: none); the search starts below them, and *known is set to the
 * number of path entries that hold the nodes of pcs[0..) afterwards (0 if it used its memo). */
uint32_t mf_trie_stack(struct mf_trie *t, void *const *pcs, int n, int truncated, uintptr_t leaf,
		       uint64_t hash, uint32_t *path, int *known);
/* Forgets the pc index (not the nodes): after an unload, pcs may name other code. */
void mf_trie_forget_index(struct mf_trie *t);

/* profile_file.c: the process directory and the per-thread files. */
struct mf_prof_file {
	struct mf_prof_header *header; /* the mapping: one page of header, then the nodes */
	struct mf_node *nodes;
	uint64_t capacity; /* nodes the file holds now */
	size_t reserved;   /* bytes of address space mapped (beyond the file's end too) */
	dev_t dev;
	ino_t ino;
	int grow_failed; /* the file could not grow once: do not retry for every new node */
	char name[32];	 /* in the process directory */
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
void mf_prof_close(struct mf_prof_file *f);
void mf_prof_finalize(struct mf_prof_header *h, uint32_t state, pid_t tid);

/* timeline.c: the thread's totals over time in its file's header page (MALLOC_FREQ_TIMELINE).
 * mf_timeline_start: at the file's making; mf_timeline_look: by the file's thread when its
 * calls_total crossed a multiple of MF_TIMELINE_STEP (nodes: its trie's, leaf_slots: the
 * slots after each leaf). */
static inline void mf_timeline_start(struct mf_prof_header *h)
{
	if (mf_config.timeline_ms) {
		h->timeline_interval_ns = mf_config.timeline_ms * 1000000ull;
		h->timeline_records = MF_TIMELINE_RECORDS;
	}
}
void mf_timeline_look(struct mf_prof_header *h, const struct mf_node *nodes, unsigned leaf_slots);

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

/* thread.c: per-thread state. */
struct mf_thread;
struct mf_tls {
	long countdown;		      /* calls until the next recorded one; <= 0: record now */
	unsigned recording;	      /* > 0: the profiler itself is running in this thread */
	unsigned disabled;	      /* recording stopped for this thread (or it has ended) */
	unsigned fork_held;	      /* this call holds mf_fork_lock for reading */
	int fork_cancel;	      /* the cancellation state to restore when it is given back */
	uint64_t fork_signals;	      /* the signal mask to restore then */
	unsigned cancel_async;	      /* the thread may be cancelled at any instruction */
	const struct mf_frame *entry; /* the frame of the call being recorded (kept in it) */
	struct mf_thread *thread;     /* NULL until the thread's first call */
	unsigned own;	      /* > 0: allocations now are the profiler's own (mf_real_own) */
	unsigned loader_held; /* this slow step's mf_loader_held */
	/* The thread's last block, as the entry point returned it, and the record of the trie
	 * leaf its call was counted at (&mf_leaf_none: not counted; NULL only in a thread that
	 * has made no call yet): freed before the thread's next call, it is a temporary. The
	 * record's file grows (and may move) only in a recorded call, which replaces both; a
	 * thread's exit and a fork clear them. nodes: the thread's trie nodes where they are now
	 * (realloc finds its old block's record again through it). */
	void *last_block;
	struct mf_leaf *last_record;
	struct mf_leaf leaf_none; /* mf_leaf_none: the thread's own, so threads share no line */
	struct mf_node *nodes;
	uint32_t life_file; /* the thread file's number in the lifetimes' registry (0: none) */
	unsigned life_busy; /* > 0: in the address map (a signal handler's call skips it) */
	unsigned
	    off; /* malloc_freq_thread_disable: this thread's calls are counted, not recorded */
	unsigned tag_depth; /* tags pushed and not popped (beyond MF_TAG_DEPTH: not kept) */
	unsigned tag_epoch; /* changed at every push and pop */
	uint16_t tags[MF_TAG_DEPTH]; /* their ids (tags.c), outermost first */
};
extern MF_TLS struct mf_tls mf_tls;
/* Brackets the profiler's own work outside an entry point (init, dlclose, exit): allocations
 * in between (a signal handler's) are counted apart, not recorded. */
static inline void mf_busy_enter(void)
{
	mf_tls.recording++;
}
static inline void mf_busy_leave(void)
{
	mf_tls.recording--;
}
void mf_thread_init(void);
/* NULL: this thread does not record. Otherwise mf_tls.countdown holds the first interval. */
struct mf_thread *mf_thread_start(void);
/* Whether mf_thread_start would give NULL at once, with nothing to do: the calling thread or
 * the whole process stopped recording (a plain read, no lock: a stale answer only sends a
 * call the slow way). */
int mf_thread_refused(void);
/* The hot path (mf_config.hot: every call recorded): a call from one of the thread's hot
 * stacks, counted; 0 if it was not one (nothing done: then mf_thread_record). */
int mf_thread_record_hot(struct mf_thread *t, size_t bytes, const struct mf_frame *from);
/* Any call: its stack found (mf_unwind_leaf) and counted. */
void mf_thread_record(struct mf_thread *t, enum mf_entry e, size_t bytes,
		      const struct mf_frame *from);
void mf_thread_count_nested(void);
/* A call made while recording is off (mf_control_off): counted apart, in no stack. */
void mf_thread_count_off(struct mf_thread *t);
/* The calling thread's hot stacks are dropped: until it records again (which keeps new ones),
 * every call of it takes the slow path, where mf_control_off is checked. */
void mf_thread_drop_hot(struct mf_thread *t);
struct malloc_freq_stats;
/* Every thread's totals, those that ended included, into s (zeroed first). */
void mf_thread_stats(struct malloc_freq_stats *s);
/* fn(file, pass, arg) for every running thread's file, under the lock of the list of threads
 * (no thread starts or ends meanwhile), each with its file's mapping held in place. What fn
 * reads of a file is exact: no call half counted, every call before fn's last pass counted,
 * every later one not. fn may be called again for a file (pass 1, 2, ...): it starts over
 * then. A thread that records meanwhile waits at most for one pass over its own file. */
typedef void mf_thread_copy_fn(const struct mf_prof_file *f, unsigned pass, void *arg);
void mf_thread_each_file(mf_thread_copy_fn *fn, void *arg);
/* On the slow path, before a call is recorded: if a snapshot asked t to hold, waits until its
 * file is copied. */
void mf_thread_hold(struct mf_thread *t);
/* The calling thread, busy in the profiler (between mf_busy_enter and leave: a signal
 * handler's call then is counted apart, never recorded), says it writes nothing to its file
 * (quiet 1) or may again (the value returned by the call that made it quiet); a snapshot then
 * need not wait for it. */
unsigned mf_thread_quiet(unsigned quiet);

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
/* The calling thread's state, or NULL; on the slow path (it notices a child made without
 * fork()'s handlers, and starts it over). */
struct mf_thread *mf_thread_current(void);
/* control.c: recording switched on and off (the public API, MALLOC_FREQ_START). */
#define MF_GATE_COLD 1u /* mf_config.hot is 0: no recorded call takes the hot path */
#define MF_GATE_OFF  2u /* recording is off for the process */
#define MF_GATE_HOLD 4u /* a snapshot asks a thread to hold (mf_thread_hold) */
/* mf_wiped.gate, 0: a recorded call may take the hot path. The hot path reads it for all of
 * the above, with the walk's epoch in one word: switching recording off costs it nothing
 * (every call then takes the slow path, which checks mf_control_off). Changed only here (a
 * copy is kept for a child, where the page is wiped): bits set (on) or cleared. */
void mf_gate_set(unsigned bits, int on);
void mf_gate_toggle(unsigned bits); /* async-signal-safe, as mf_gate_set */
/* In a child, whose page is wiped: the gate as the parent had it, no snapshot holding. */
void mf_gate_restore(void);
void mf_control_init(void); /* after mf_config_load */
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
/* Waits until the last task has left the process (before the program's unshare and setns). */
void mf_fds_apart_settle(void);

/* life/: lifetimes (MALLOC_FREQ_LIFETIMES=1), the address map from each live block to the
 * leaf that allocated it. Off, nothing here is called. */
extern int mf_life_on;
/* Under sampling, the filter of the addresses that may be in the map (NULL: any may be): a
 * count per hash of an address, MF_LIFE_FILTER_BITS bits of it, of the map's blocks that have
 * that hash (255: that many or more, for good). 0 is sure: no such block is in the map. */
#define MF_LIFE_FILTER_BITS 20
extern uint8_t *mf_life_filter;
/* p's count in the filter: the top bits of a hash of its address. */
static inline uint64_t mf_life_filter_at(const void *p)
{
	return (uint64_t)((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> (64 - MF_LIFE_FILTER_BITS);
}
/* Whether block p may be in the map (a free of one that is not costs this only). */
static inline int mf_life_maybe(const void *p)
{
	const uint8_t *f = mf_life_filter;
	if (mf_unlikely(!f)) /* (not sampling: the map knows every block) */
		return 1;
	return __atomic_load_n(&f[mf_life_filter_at(p)], __ATOMIC_RELAXED);
}
/* A thread file's nodes, registered so that any thread can charge a free to it (also after
 * its thread ended: the file stays mapped); its number, or 0 when the registry is full. */
uint32_t mf_life_file_new(struct mf_node *nodes);
/* Block p of n bytes, just returned by the call counted at the thread's last leaf record. */
void mf_life_alloc(void *p, size_t n);
/* Block p (not NULL) freed: charged to its leaf, or (not sampling) counted as a free of an
 * unknown block. Under sampling, callers first ask mf_life_maybe. */
void mf_life_free(void *p);
/* A live block of the lifetimes' address map: where it is, what it requested, the leaf that
 * allocated it, when. */
struct mf_life_slot {
	uintptr_t addr; /* 0: empty */
	uint64_t size;
	uint32_t file, node; /* the leaf: node node of the nodes of file number file */
	uint64_t born;	     /* the time-stamp counter */
};
/* realloc's old block (not NULL) out of the map before the real call, which may free it and
 * another thread be given its address at once: 1 (it is in *held), 0 (the map did not have
 * it), or -1 (nothing to do: a signal handler's call in the map, the profiler's own, or a
 * block not sampled). */
int mf_life_realloc_take(void *old, struct mf_life_slot *held);
/* ... and the real call returned p of n bytes: a failed call gives the block back to the map;
 * otherwise it was freed (taken 1: charged to its leaf; 0: a free of an unknown block) and p
 * is tracked. */
void mf_life_realloc_done(int taken, const struct mf_life_slot *held, void *p, size_t n);
/* At exit: a process that ends at its peak has the end as its peak. */
void mf_life_exit(void);
/* Every leaf's peak fields brought up to date (at exit, and before a snapshot copies them). */
void mf_life_settle(void);
void mf_life_thread_exit(void);	 /* the thread's live bytes not yet counted, counted */
void mf_life_init(void);	 /* at start, with lifetimes on */
uint64_t mf_life_live_now(void); /* the process's live bytes, this thread's changes in */
void mf_life_prefork(void);
void mf_life_postfork_parent(void);
void mf_life_postfork_child(void); /* the parent's blocks and files are not the child's */

/* spin.c: the profiler's spinlocks (an int: 0 free, 1 held), each held a few instructions at a
 * time. A thread that finds one held spins a little, then gives the processor away, then
 * sleeps 50 us at a time (mf_spin_wait): under SCHED_FIFO a yield gives way only to threads of
 * its own priority, and a holder of lower priority on the same processor would never get to
 * release it. */
void mf_spin_wait(int *lock);
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

/* fork.c: fork handling. pthread_atfork's handlers call each module's prefork and postfork in
 * the one order fork.c fixes; a child, made with those handlers or without them, is reset by
 * the one sequence there, each module's postfork_child in turn. */
enum mf_fork_child {
	MF_FORK_CHILD, /* fork()'s handlers ran */
	MF_FORK_RAW,   /* a child made without them (a raw clone), at its first slow step */
	MF_FORK_INERT, /* forked by a signal handler inside a slow step: not recorded */
};
void mf_fork_init(void); /* at start: the handlers, and mf_wiped marked to be wiped in a child */
void mf_fork_raw_child(void); /* errno is kept */
/* thread.c's part: the list of threads locked across fork; in a child, the parent's states
 * dropped. */
void mf_thread_prefork(void);
void mf_thread_postfork_parent(void);
void mf_thread_postfork_child(enum mf_fork_child how);

/* A page of its own, wiped (zeroed) in a child made without fork()'s handlers (a raw clone,
 * syscall(SYS_fork)) where the kernel can (MADV_WIPEONFORK, Linux 4.14): the hot path checks
 * that its hot stacks are of the current epoch, so every call in such a child takes the slow
 * path, which finds owner 0 and starts the child over in a directory of its own (fork.c). */
union mf_wiped {
	struct {
		union {
			struct {
				unsigned epoch; /* the walk's (lib/unwind/rule_table.c); never 0
						   but there */
				unsigned gate;	/* MF_GATE_* (control.c) */
			};
			uint64_t hot; /* both, as the hot path reads them: epoch | gate << 32 */
		};
		pid_t owner; /* the process it was last set in */
	};
	unsigned char page[4096];
};
extern union mf_wiped mf_wiped;
/* mf_wiped was marked (MADV_WIPEONFORK): a zero owner is a child made without the handlers. */
extern int mf_wiped_marked;
/* A child made without fork()'s handlers, not reset yet (mf_fork_raw_child resets it). */
static inline int mf_fork_raw_pending(void)
{
	return mf_wiped_marked && !mf_wiped.owner;
}

/* Is recording off for this call (for the process, or for the calling thread)? */
static inline int mf_control_off(void)
{
	return (__atomic_load_n(&mf_wiped.gate, __ATOMIC_RELAXED) & MF_GATE_OFF) || mf_tls.off;
}

/* The record of no leaf: mf_tls.last_record when the thread's last call was not counted at a
 * leaf (what is counted there is never read), so that free needs no test for none. Each
 * thread's own: under sampling most frees count a temporary there, and one shared by all
 * threads made their frees take turns at its cache line (2.2x the plain run's cpu, where
 * recording every call took 1.4x, in make bench's 2-thread synthetic workload). */
#define mf_leaf_none (mf_tls.leaf_none)

/* The thread's last block was freed: a temporary of its leaf record x (&mf_leaf_none: none).
 * Not in a child made without fork()'s handlers (the record is the parent's). (A signal
 * handler's free while the profiler runs in this thread finds x where it is: the profiler
 * points it at mf_leaf_none before anything that may grow the file.) */
static inline void mf_thread_temporary(struct mf_leaf *x)
{
	if (mf_nonzero(mf_wiped.epoch))
		x->temporaries++;
}

/* Runs fn(arg) on the thread's own stack (MF_THREAD_STACK bytes): the slow steps (a walk,
 * libunwind, files, the loader) need more than a program's small stacks have. */
#define MF_THREAD_STACK (64 << 10)
long mf_thread_on_stack(struct mf_thread *t, long (*fn)(void *), void *arg);
/* Does sp lie in that stack? (t may be NULL.) */
int mf_thread_on_own_stack(const struct mf_thread *t, uintptr_t sp);
void mf_thread_process_exit(void);

/* Held for reading while the profiler calls libunwind, looks at the loaded objects, takes
 * one of its locks or creates or grows a file; for writing across fork(): so no thread holds
 * such a lock (its own, libunwind's, the loader's) when the child is made. A recorded call
 * whose stack, rules and trie nodes are all known takes none of those steps, and does not take
 * this lock either: each slow step calls mf_fork_hold() first, and the entry point releases it
 * at the end. A fork is not starved by allocating threads: while one is pending, a new reader
 * waits (mf_fork_wait), but for a thread that holds the loader's lock (mf_tls.loader_held),
 * which the fork may be waiting for (through a reader that waits for the loader's lock). */
extern pthread_rwlock_t mf_fork_lock;
extern unsigned mf_fork_pending; /* forks waiting for the lock or holding it */
void mf_fork_wait(void);	 /* until none is */
/* While it is held, every signal is blocked (but glibc's set*id broadcast) and cancellation is
 * off: nothing can interrupt a step that holds a lock of ours (every other lock of ours is
 * taken under it), neither a signal handler that jumps out with siglongjmp nor an
 * asynchronous cancellation, which would leave it held and every later fork waiting for ever.
 * Cancellation's signal is blocked too: glibc 2.36 acts on one sent just before the state was
 * set to disabled (the lock was left held in about one run in two of 100 cancelled rounds).
 * Delivered when the mask is given back, it cancels the thread then. (libunwind's own signal
 * masking, then, does nothing.) */
#define MF_SIGNAL_CANCEL (1ull << (32 - 1)) /* glibc's SIGCANCEL */
#define MF_SIGNALS_ALL	 (~0ull & ~(1ull << (33 - 1)))
static inline void mf_fork_hold(void)
{
	if (!mf_tls.fork_held) {
		uint64_t all = MF_SIGNALS_ALL;
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &mf_tls.fork_signals, 8);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mf_tls.fork_cancel);
		mf_tls.fork_held = 1;
		if (mf_unlikely(__atomic_load_n(&mf_fork_pending, __ATOMIC_ACQUIRE)) &&
		    !mf_tls.loader_held)
			mf_fork_wait();
		pthread_rwlock_rdlock(&mf_fork_lock);
	}
}
static inline void mf_fork_release(void)
{
	pthread_rwlock_unlock(&mf_fork_lock);
	mf_tls.fork_held = 0;
	pthread_setcancelstate(mf_tls.fork_cancel, &mf_tls.fork_cancel);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mf_tls.fork_signals, NULL, 8);
}

/* dl_iterate_phdr with every signal blocked: it holds the loader's lock, and a program's
 * signal handler that walked the loaded objects too (libunwind does, in unw_backtrace) would
 * wait on that lock for ever. The profiler's own walks all go through here. */
static inline int mf_objects_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	if (mf_tls.fork_held) /* (blocked already) */
		return dl_iterate_phdr(cb, arg);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = dl_iterate_phdr(cb, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
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
