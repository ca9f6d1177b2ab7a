/* Thread state: what a recorded call touches on its way from an entry point to its counter
 * (the hot path, lib/interpose.c): the thread-local state, the thread's state, the word that
 * holds the walk's epoch and the recording gate; then thread.c's interface: a thread's start
 * and end, its counts, the snapshot copy protocol. Runs inside malloc: no malloc, no stdio. */
#ifndef MF_THREAD_H
#define MF_THREAD_H

#include <pthread.h>
#include <stdint.h>

#include "cpu_clock.h"
#include "malloc_freq_format.h"
#include "mf_internal.h"
#include "trie.h"
#include "unwind/unwind.h"

/* The calling thread's own state (initial-exec TLS): the countdown, whether the profiler runs
 * in it, its last block and that block's leaf record. */
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
/* The record of no leaf: mf_tls.last_record when the thread's last call was not counted at a
 * leaf (what is counted there is never read), so that free needs no test for none. Each
 * thread's own: under sampling most frees count a temporary there, and one shared by all
 * threads made their frees take turns at its cache line (2.2x the plain run's cpu, where
 * recording every call took 1.4x, in make bench's 2-thread synthetic workload). */
#define mf_leaf_none (mf_tls.leaf_none)

/* The recording gate (mf_wiped.gate, control.c): */
#define MF_GATE_COLD 1u /* mf_config.hot is 0: no recorded call takes the hot path */
#define MF_GATE_OFF  2u /* recording is off for the process */
#define MF_GATE_HOLD 4u /* a snapshot asks a thread to hold (mf_thread_hold) */

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
	unsigned char page[MF_PAGE_SIZE];
};
extern union mf_wiped mf_wiped;
/* mf_wiped was marked (MADV_WIPEONFORK): a zero owner is a child made without the handlers. */
extern int mf_wiped_marked;

#define MF_THREAD_STACK (64 << 10) /* the stack of a thread's slow steps: mf_thread_on_stack */
/* A thread's state, in a slot of the pool (pool.c; its pages touched as used). The thread's
 * one mapping of its own is its file. */
struct mf_thread {
	struct mf_unwind_thread unwind;
	struct mf_trie trie;
	struct mf_prof_file file;
	uint32_t life_file; /* its number in the lifetimes' registry; 0: none */
	pid_t tid;
	unsigned exit_rounds;
	uint64_t rng;	    /* xorshift64* state for the sampling intervals */
	long interval;	    /* the countdown's current interval: calls it stands for */
	unsigned tag_epoch; /* mf_tls.tag_epoch when trie.root was last set */
	uint64_t cpu_left;  /* MALLOC_FREQ_WEIGHT=time: the thread's CPU time when the profiler
			       last returned from a recorded call (0: the thread's start) */
	struct mf_cpu_clock cpu_clock;
	struct mf_thread *prev, *next;
	/* For snapshots (mf_thread_each_file): the thread's mf_tls.recording, read by the copier;
	 * quiet: the thread, though busy, writes nothing to its file (it waits for a lock of ours);
	 * hold: a round number asking the thread to wait before its next recorded call; held: the
	 * round it waits in. */
	const unsigned *recording;
	unsigned quiet, hold, held, rounds;
	/* Held while the file grows (its mapping may move) and while another thread reads the
	 * nodes (malloc_freq_stats); zeroed memory is an unlocked mutex. */
	pthread_mutex_t grow_lock;
	struct mf_trie_room trie_room;
	/* The stack the thread's slow steps run on (mf_thread_on_stack), touched as used: a
	 * program's small stacks (coroutines, signal stacks) have no room for them. */
	_Alignas(64) unsigned char stack[MF_THREAD_STACK];
};

/* Which of the leaf record's size counts takes a request of bytes: a word whose highest set
 * bit, in the byte of that count, is the lowest set bit (its keys are compared with the
 * request's bucket all at once); 0 when none does yet. (x86-64 is little-endian: byte i of
 * the word is size_key[i].) */
static inline uint64_t mf_leaf_size_slot(const struct mf_leaf *x, size_t bytes)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t keys;
	__builtin_memcpy(&keys, x->size_key, sizeof(keys));
	keys ^= (MF_SIZE_BUCKET(bytes) + 1) * ones; /* a zero byte where the key is the bucket */
	return (keys - ones) & ~keys & (ones << 7);
}

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

/* The thread's last block was freed: a temporary of its leaf record x (&mf_leaf_none: none).
 * Not in a child made without fork()'s handlers (the record is the parent's). (A signal
 * handler's free while the profiler runs in this thread finds x where it is: the profiler
 * points it at mf_leaf_none before anything that may grow the file.) */
static inline void mf_thread_temporary(struct mf_leaf *x)
{
	if (mf_nonzero(mf_wiped.epoch))
		x->temporaries++;
}

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

/* thread.c */
void mf_thread_init(void);
/* NULL: this thread does not record. Otherwise mf_tls.countdown holds the first interval. */
struct mf_thread *mf_thread_start(void);
/* Whether mf_thread_start would give NULL at once, with nothing to do: the calling thread or
 * the whole process stopped recording (a plain read, no lock: a stale answer only sends a
 * call the slow way). */
int mf_thread_refused(void);
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
/* Whether a listed thread holds the file name of the process directory: one that ended in
 * seccomp strict mode stays listed, its file mapped, though its header says it ended. Takes
 * the lock of the list of threads. */
int mf_thread_holds(const char *name);
/* On the slow path, before a call is recorded: if a snapshot asked t to hold, waits until its
 * file is copied. */
void mf_thread_hold(struct mf_thread *t);
/* The calling thread, busy in the profiler (between mf_busy_enter and leave: a signal
 * handler's call then is counted apart, never recorded), says it writes nothing to its file
 * (quiet 1) or may again (the value returned by the call that made it quiet); a snapshot then
 * need not wait for it. */
unsigned mf_thread_quiet(unsigned quiet);
/* The calling thread's state, or NULL; on the slow path (it notices a child made without
 * fork()'s handlers, and starts it over). */
struct mf_thread *mf_thread_current(void);
/* Runs fn(arg) on the thread's own stack (MF_THREAD_STACK bytes): the slow steps (a walk,
 * libunwind, files, the loader) need more than a program's small stacks have. */
long mf_thread_on_stack(struct mf_thread *t, long (*fn)(void *), void *arg);
/* The timeline's look, from the hot path (the program's stack) or a slow step: the header's
 * room, when the look may need it, is reserved first, on the thread's own stack. */
void mf_thread_timeline_look(struct mf_thread *t);
/* Does sp lie in that stack? (t may be NULL.) */
int mf_thread_on_own_stack(const struct mf_thread *t, uintptr_t sp);
void mf_thread_process_exit(void);

#endif
