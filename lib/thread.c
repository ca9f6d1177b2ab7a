/* Per-thread recording state: initial-exec TLS, a trie in the thread's own file, a list of live
 * threads for process exit and fork, a pthread key whose destructor finalizes the file.
 * Runs inside malloc: no malloc, no stdio; the only lock is taken at thread start and exit. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu_clock.h"
#include "fork.h"
#include "life/life.h"
#include "loaded.h"
#include "malloc_freq.h"
#include "mf_internal.h"
#include "thread.h"
#include "trie.h"

/* Calls fn(arg) on the stack whose top is top (16-aligned) and returns what it returns, in a
 * frame an unwinder goes through back to the caller's (lib/arch/). */
long mf_on_stack(void *top, long (*fn)(void *), void *arg) __attribute__((visibility("hidden")));
__asm__(MF_ARCH_ON_STACK);

int mf_thread_on_own_stack(const struct mf_thread *t, uintptr_t sp)
{
	return t && sp - (uintptr_t)t->stack <= sizeof(t->stack);
}

long mf_thread_on_stack(struct mf_thread *t, long (*fn)(void *), void *arg)
{
	return mf_on_stack(t->stack + sizeof(t->stack), fn, arg);
}

static long mf_thread_reserve_header(void *file)
{
	return mf_prof_reserve_header(file);
}

MF_NOINLINE void mf_thread_timeline_look(struct mf_thread *t)
{
	if (mf_unlikely(mf_timeline_wants_room(&t->file))) {
		if (mf_thread_on_own_stack(t, (uintptr_t)__builtin_frame_address(0)))
			mf_prof_reserve_header(&t->file);
		else
			mf_thread_on_stack(t, mf_thread_reserve_header, &t->file);
	}
	mf_timeline_look(&t->file, t->trie.leaf_slots);
}

MF_TLS struct mf_tls mf_tls;
static pthread_mutex_t mf_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mf_thread *mf_threads;
static pthread_key_t mf_thread_key;
static int mf_thread_key_ok;
static int mf_stopped; /* recording off for the whole process after a fatal setup error */
/* The totals of the threads that ended (malloc_freq_stats), under mf_threads_lock. */
static struct malloc_freq_stats mf_ended;

static void mf_thread_resolve(uintptr_t pc, struct mf_node *node)
{
	uint64_t rel;
	node->module = mf_modules_resolve(pc, &rel);
	node->rel_pc = rel;
}

static struct mf_node *mf_thread_grow(void *thread, uint64_t *capacity)
{
	struct mf_thread *t = thread;
	mf_fork_hold(); /* reopens the file */
	if (mf_prof_extend(&t->file))
		return NULL;
	pthread_mutex_lock(&t->grow_lock);
	struct mf_node *nodes = mf_prof_grow(&t->file, capacity);
	if (nodes) /* (the node count lies in the header, which may have moved) */
		t->trie.count = &t->file.header->node_count;
	if (nodes && t == mf_tls.thread)
		mf_tls.nodes = nodes;
	pthread_mutex_unlock(&t->grow_lock);
	return nodes;
}

static void mf_thread_unlink(struct mf_thread *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		mf_threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->prev = t->next = NULL;
}

static void mf_thread_free(struct mf_thread *t)
{
	mf_unwind_thread_end(&t->unwind);
	mf_trie_destroy(&t->trie);
	mf_prof_close(&t->file);
	mf_pool_give(t);
}

/* The thread's last block and the record it points into go with the thread's file. */
static void mf_thread_forget_last(void)
{
	mf_tls.last_block = NULL;
	mf_tls.last_record = &mf_leaf_none; /* (a call interrupted by a fork may set the block) */
	mf_tls.nodes = NULL;
	mf_tls.life_file = 0;
}

static void mf_stats_add(uint64_t *to, uint64_t v)
{
	if (__builtin_add_overflow(*to, v, to))
		*to = UINT64_MAX;
}

/* Adds thread t's counts to s: a pass over its nodes (their leaves hold the entry point),
 * stepping over the records that follow leaves and size histograms. The caller holds
 * mf_threads_lock, and t's grow_lock if t is another thread. */
static void mf_thread_stats_add(const struct mf_thread *t, struct malloc_freq_stats *s)
{
	const struct mf_prof_header *h = t->file.header;
	uint64_t n = __atomic_load_n(&h->node_count, __ATOMIC_ACQUIRE);
	const struct mf_node *nodes = t->file.nodes;
	for (uint64_t i = 1; i < n; i++) {
		const struct mf_node *x = &nodes[i];
		if (x->module == MF_MODULE_ENTRY && x->rel_pc < MF_ENTRY_COUNT) {
			mf_stats_add(&s->calls[x->rel_pc], x->calls);
			mf_stats_add(&s->bytes[x->rel_pc], x->bytes);
		}
		if (x->module == MF_MODULE_ENTRY) /* (its records are no nodes) */
			i += t->trie.leaf_slots;
		else if (x->module == MF_MODULE_SIZES)
			i += MF_SIZES_SLOTS;
	}
	mf_stats_add(&s->calls_off, h->calls_off);
	s->threads++;
}

/* Called in each round of key destructors: staying registered for all of them catches what
 * other destructors allocate; the file is finalized in the last round. */
static void mf_thread_key_destructor(void *arg)
{
	struct mf_thread *t = arg;
	if (mf_unlikely(mf_confined)) { /* (no system call: t stays listed, its file mapped) */
		mf_confine_end();
		return;
	}
	if (mf_unlikely(mf_fork_raw_pending())) {
		mf_fork_raw_child(); /* (t was the parent's: its file is not ours to end) */
		return;
	}
	if (++t->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(mf_thread_key, t);
		return;
	}
	mf_busy_enter();
	__atomic_store_n(&t->quiet, 1, __ATOMIC_RELEASE); /* (a snapshot copies it meanwhile) */
	pthread_mutex_lock(&mf_threads_lock);
	mf_thread_unlink(t);
	mf_thread_stats_add(t, &mf_ended);
	/* Finalized before the lock goes: a snapshot copies the running threads' files under it,
	 * then links the finalized ones it finds, so a file between the two would be in neither
	 * (and the snapshot's total short of the one before). */
	mf_prof_finalize(t->file.header, MF_STATE_THREAD_EXIT, t->tid);
	pthread_mutex_unlock(&mf_threads_lock);
	if (mf_life_on)
		mf_life_thread_exit();
	mf_thread_forget_last();
	mf_tls.thread = NULL;
	mf_tls.disabled = 1; /* the thread is ending: a new file now would never be finalized */
	mf_thread_free(t);
	mf_busy_leave();
}

/* In a child forked by a signal handler that interrupted a recorded call: that call's
 * thread state, still in use when the handler returns, freed once the call is done. */
static struct mf_thread *mf_thread_orphan;

void mf_thread_prefork(void)
{
	pthread_mutex_lock(&mf_threads_lock);
}

void mf_thread_postfork_parent(void)
{
	pthread_mutex_unlock(&mf_threads_lock);
}

/* The child of a fork from a signal handler that interrupted a recorded call: the call goes
 * on when the handler returns, but must not write to the parent's file: private zeroed
 * memory takes the place of its mappings. */
static void mf_thread_adopt_orphan(struct mf_thread *t)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE;
	if (mmap(t->file.header, t->file.reserved, PROT_READ | PROT_WRITE, flags, -1, 0) ==
	    MAP_FAILED)
		mf_stopped = 1;	 /* (cannot happen: the range is mapped) */
	t->file.grow_failed = 1; /* growing reopens the file by its name: the parent's */
	mf_thread_orphan = t;
}

/* The parent's thread states go (their files are the parent's), but for the one of a call
 * that a signal handler interrupted to fork (MF_FORK_CHILD: the forking thread's, in use when
 * the handler returns). MF_FORK_INERT: other threads may have been in slow steps too, their
 * states are left alone, and the process is not recorded. */
void mf_thread_postfork_child(enum mf_fork_child how)
{
	struct mf_thread *t = mf_threads;
	if (how == MF_FORK_INERT) {
		mf_stopped = 1;
		if (mf_tls.thread)
			mf_thread_adopt_orphan(mf_tls.thread);
		t = NULL;
	}
	while (t) {
		struct mf_thread *next = t->next;
		if (how == MF_FORK_CHILD && t == mf_tls.thread && mf_tls.recording)
			mf_thread_adopt_orphan(t); /* the interrupted call still uses it */
		else
			mf_thread_free(t);
		t = next;
	}
	mf_threads = NULL;
	mf_tls.thread = NULL;
	mf_thread_forget_last();
	pthread_mutex_t fresh_mutex = PTHREAD_MUTEX_INITIALIZER;
	memcpy(&mf_threads_lock, &fresh_mutex, sizeof(fresh_mutex));
	if (how == MF_FORK_INERT)
		return;
	if (how == MF_FORK_RAW)
		mf_thread_orphan = NULL;
	memset(&mf_ended, 0, sizeof(mf_ended)); /* (the child starts from zero) */
	if (mf_thread_key_ok)
		pthread_setspecific(mf_thread_key, NULL);
}

struct mf_thread *mf_thread_current(void)
{
	if (mf_unlikely(mf_fork_raw_pending()))
		mf_fork_raw_child();
	return mf_tls.thread;
}

void mf_thread_init(void)
{
	int saved = errno;
	mf_life_on = mf_config.lifetimes;
	if (mf_life_on) {
		mf_life_init();
		mf_real_free_all_apart();
	}
	errno = saved;
	mf_thread_key_ok = pthread_key_create(&mf_thread_key, mf_thread_key_destructor) == 0;
	if (!mf_thread_key_ok)
		mf_log("no pthread key left; thread files are finalized only at process exit");
}

static void mf_thread_drop_orphan(void)
{
	struct mf_thread *t = mf_thread_orphan;
	mf_thread_orphan = NULL;
	if (t)
		mf_thread_free(t);
}

/* A thread's start after its state is mapped, on its own stack: the process directory if this
 * is the process's first thread, its file, its trie. 0, or -errno (said on stderr). */
static long mf_thread_setup(void *arg)
{
	struct mf_thread *t = arg;
	int err = mf_prof_dir_ensure();
	if (err) {
		mf_stopped = 1;
		return err;
	}
	err = mf_prof_open(&t->file, t->tid);
	if (!err && mf_trie_init(&t->trie, &t->trie_room, t->file.nodes, t->file.capacity,
				 &t->file.header->node_count, mf_thread_grow, mf_thread_resolve, t))
		err = -ENOMEM;
	if (!err && mf_life_on) {
		t->trie.leaf_slots += MF_LIFE_SLOTS;
		t->life_file = mf_life_file_new(t->file.nodes);
	}
	if (err)
		MF_LOG_ONCE("cannot create the profile of thread %d in %s: %s; threads that cannot "
			    "create their file are not recorded (said once)",
			    (int)t->tid, mf_prof_dir(), strerrordesc_np(-err));
	return err;
}

int mf_thread_refused(void)
{
	return (mf_tls.disabled || mf_stopped) && !mf_thread_orphan;
}

struct mf_thread *mf_thread_start(void)
{
	/* In a child forked by a signal handler, the interrupted call's state is dropped at
	 * the next call (this one: mf_tls.thread was cleared), when no older call is running. */
	if (mf_tls.recording == 1)
		mf_thread_drop_orphan();
	if (mf_tls.disabled || mf_stopped)
		return NULL;
	struct mf_thread *t = mf_pool_take(sizeof(*t));
	if (!t) {
		MF_LOG_ONCE("out of memory for thread %d; it and any other thread in the same "
			    "state are not recorded (said once)",
			    (int)gettid());
		mf_tls.disabled = 1;
		return NULL;
	}
	t->tid = gettid();
	t->recording = &mf_tls.recording;
	mf_unwind_thread_init(&t->unwind);
	if (mf_thread_on_stack(t, mf_thread_setup, t)) {
		mf_thread_free(t);
		mf_tls.disabled = !mf_stopped;
		return NULL;
	}
	t->rng = mf_sampling_seed(t->tid, t);
	t->interval = mf_sampling_draw(&t->rng);
	mf_tls.countdown = t->interval;
	pthread_mutex_lock(&mf_threads_lock);
	/* A signal handler forked this process meanwhile: its file is the parent's. */
	if (mf_stopped) {
		pthread_mutex_unlock(&mf_threads_lock);
		mf_thread_free(t);
		return NULL;
	}
	t->next = mf_threads;
	if (mf_threads)
		mf_threads->prev = t;
	mf_threads = t;
	pthread_mutex_unlock(&mf_threads_lock);
	if (mf_thread_key_ok)
		pthread_setspecific(mf_thread_key, t);
	mf_tls.nodes = t->trie.nodes;
	mf_tls.life_file = t->life_file;
	mf_tls.thread = t;
	return t;
}

void mf_thread_count_nested(void)
{
	struct mf_thread *t = mf_tls.thread;
	mf_tls.last_record = &mf_leaf_none; /* (the call is not counted at a leaf) */
	if (t && !mf_fork_raw_pending())    /* (not a raw fork's child: the parent's) */
		__atomic_add_fetch(&t->file.header->calls_nested, 1, __ATOMIC_RELAXED);
}

/* The leaf record after a leaf (malloc_freq_format.h). */
static inline struct mf_leaf *mf_thread_leaf(struct mf_thread *t, uint32_t node)
{
	return (struct mf_leaf *)&t->trie.nodes[node + 1];
}

/* A size bucket the leaf record does not hold yet: its next free key, or the leaf's dense
 * histogram (a trie child, made the first time). The slow path: the file may grow. */
static void mf_thread_count_size(struct mf_thread *t, uint32_t node, size_t bytes)
{
	struct mf_leaf *x = mf_thread_leaf(t, node);
	uint64_t slot = mf_leaf_size_slot(x, bytes);
	unsigned b = MF_SIZE_BUCKET(bytes);
	if (slot) {
		x->size_count[(unsigned)__builtin_ctzll(slot) >> 3]++;
		return;
	}
	for (int i = 0; i < MF_LEAF_SIZES; i++)
		if (!x->size_key[i]) {
			x->size_key[i] = (uint8_t)(b + 1);
			x->size_count[i]++;
			return;
		}
	uint32_t dense = mf_trie_child(&t->trie, node, MF_TRIE_KEY_SIZES);
	if (dense) /* (else the file could not grow: the call's count stands without its size) */
		((uint64_t *)&t->trie.nodes[dense + 1])[b]++;
}

/* The countdown to the next recorded call starts over. */
static inline void mf_thread_next(struct mf_thread *t)
{
	if (mf_unlikely(mf_config.sample > 1)) { /* (else the countdown stays <= 0: every call) */
		t->interval = mf_sampling_draw(&t->rng);
		mf_tls.countdown = t->interval;
	}
}

void mf_thread_count_off(struct mf_thread *t)
{
	t->file.header->calls_off += (uint64_t)t->interval;
	mf_thread_next(t);
}

void mf_thread_drop_hot(struct mf_thread *t)
{
	mf_unwind_hot_drop(&t->unwind);
}

void mf_thread_stats(struct malloc_freq_stats *s)
{
	memset(s, 0, sizeof(*s));
	unsigned quiet = mf_thread_quiet(1); /* (a snapshot holding the lock need not wait) */
	pthread_mutex_lock(&mf_threads_lock);
	*s = mf_ended;
	for (struct mf_thread *t = mf_threads; t; t = t->next) {
		int other = t != mf_tls.thread;
		if (other)
			pthread_mutex_lock(&t->grow_lock);
		mf_thread_stats_add(t, s);
		if (other)
			pthread_mutex_unlock(&t->grow_lock);
	}
	pthread_mutex_unlock(&mf_threads_lock);
	mf_thread_quiet(quiet);
	s->sample_rate = mf_config.sample;
	for (int e = 0; e < MF_ENTRY_COUNT && mf_config.sample > 1; e++) {
		if (__builtin_mul_overflow(s->calls[e], mf_config.sample, &s->calls[e]))
			s->calls[e] = UINT64_MAX;
		if (__builtin_mul_overflow(s->bytes[e], mf_config.sample, &s->bytes[e]))
			s->bytes[e] = UINT64_MAX;
	}
}

/* Does t write nothing to its file now: outside any recorded call, or waiting for our lock? */
static int mf_thread_idle(const struct mf_thread *t)
{
	/* (quiet first: a thread in seccomp strict mode is quiet for good, and may have ended
	 * without a word, its thread-local storage reused) */
	return __atomic_load_n(&t->quiet, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(t->recording, __ATOMIC_ACQUIRE);
}

/* One copy of t's file by fn. Exact if t was idle when it began and when it ended, and its
 * calls_total did not move: every write of a recorded call lies between its mf_tls.recording
 * going up and down, and with it calls_total goes up (x86-64 stores are seen in the order made,
 * loads are made in order: calls_total read before the first look, after the last). */
static int mf_thread_copy(struct mf_thread *t, mf_thread_copy_fn *fn, void *arg, unsigned pass)
{
	pthread_mutex_lock(&t->grow_lock);
	const uint64_t *calls = &t->file.header->calls_total;
	uint64_t before = __atomic_load_n(calls, __ATOMIC_ACQUIRE);
	int idle = mf_thread_idle(t);
	fn(&t->file, pass, arg);
	idle = mf_thread_idle(t) && idle;
	int exact = idle && __atomic_load_n(calls, __ATOMIC_ACQUIRE) == before;
	pthread_mutex_unlock(&t->grow_lock);
	return exact;
}

/* Every other thread's next load after this sees our stores before it, or its stores before
 * its load are seen by our loads after this: the hot path needs no fence of its own to see a
 * hold asked for. 0, or -1 if the kernel cannot (no membarrier). */
static int mf_thread_fence(void)
{
	if (!syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return 0;
	if (errno == EPERM && /* (registered once per process: a forked child anew) */
	    !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) &&
	    !syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return 0;
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) ? -1 : 0;
}

static uint64_t mf_thread_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Is thread tid running or waiting for a processor (not blocked)? 1 if not known. */
static int mf_thread_runnable(pid_t tid)
{
	char path[64], buf[256];
	mf_format(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	ssize_t n = mf_read_head(path, buf, sizeof(buf) - 1, NULL);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	const char *state = strrchr(buf, ')'); /* (the name in parentheses may hold anything) */
	return !state || state[1] != ' ' || state[2] == 'R';
}

/* t keeps recording through every optimistic copy: it is asked to hold. Every thread's calls
 * take the slow path meanwhile (mf_wiped.gate), where t waits (mf_thread_hold) before it records;
 * a call of t already past that point is waited for, as long as t runs or waits for a
 * processor (MF_HOLD_RUNNABLE_MS at most). A thread blocked inside a call (a signal handler
 * that waits, or never returns) is copied as it stands after MF_HOLD_BLOCKED_MS. */
enum { MF_COPY_TRIES = 4, MF_HOLD_BLOCKED_MS = 20, MF_HOLD_RUNNABLE_MS = 2000 };

/* A short wait for another thread, that gives the processor away now and then (it may be the
 * one that thread needs). */
static void mf_thread_pause(unsigned i)
{
	if (i % 64 == 63)
		sched_yield();
	else
		for (int k = 0; k < 100; k++)
			mf_cpu_relax();
}

/* Waits while t is inside a call it has not held in (round), within the limits above. */
static void mf_thread_wait_call(const struct mf_thread *t, unsigned round)
{
	uint64_t now = mf_thread_now_ms(), end = now + MF_HOLD_RUNNABLE_MS;
	uint64_t until = now + MF_HOLD_BLOCKED_MS;
	for (unsigned i = 0;
	     !mf_thread_idle(t) && __atomic_load_n(&t->held, __ATOMIC_ACQUIRE) != round; i++) {
		if (i % 64 == 63 && (now = mf_thread_now_ms()) >= until) {
			if (now >= end || !mf_thread_runnable(t->tid))
				return;
			until = now + MF_HOLD_BLOCKED_MS;
		}
		mf_thread_pause(i);
	}
}

static void mf_thread_copy_held(struct mf_thread *t, mf_thread_copy_fn *fn, void *arg,
				unsigned pass)
{
	unsigned round = ++t->rounds ? t->rounds : ++t->rounds;
	__atomic_store_n(&t->hold, round, __ATOMIC_SEQ_CST);
	mf_gate_set(MF_GATE_HOLD, 1);
	mf_thread_fence(); /* (without it, a call may still take the hot path: as it stands) */
	mf_thread_wait_call(t, round);
	pthread_mutex_lock(&t->grow_lock);
	fn(&t->file, pass, arg);
	pthread_mutex_unlock(&t->grow_lock);
	mf_gate_set(MF_GATE_HOLD, 0);
	__atomic_store_n(&t->hold, 0, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &t->hold, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void mf_thread_hold(struct mf_thread *t)
{
	unsigned round = __atomic_load_n(&t->hold, __ATOMIC_ACQUIRE);
	if (!round)
		return;
	__atomic_store_n(&t->held, round, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&t->hold, __ATOMIC_ACQUIRE) == round)
		syscall(SYS_futex, &t->hold, FUTEX_WAIT_PRIVATE, round, NULL, NULL, 0);
}

unsigned mf_thread_quiet(unsigned quiet)
{
	struct mf_thread *t = mf_tls.thread;
	return t ? __atomic_exchange_n(&t->quiet, quiet, __ATOMIC_ACQ_REL) : 0;
}

void mf_thread_each_file(mf_thread_copy_fn *fn, void *arg)
{
	pthread_mutex_lock(&mf_threads_lock);
	for (struct mf_thread *t = mf_threads; t; t = t->next) {
		unsigned pass = 0;
		if (t == mf_tls.thread) { /* (busy taking the snapshot: it records nothing now) */
			pthread_mutex_lock(&t->grow_lock);
			fn(&t->file, pass, arg);
			pthread_mutex_unlock(&t->grow_lock);
			continue;
		}
		while (!mf_thread_copy(t, fn, arg, pass++)) {
			if (pass == MF_COPY_TRIES) {
				mf_thread_copy_held(t, fn, arg, pass);
				break;
			}
			mf_thread_pause(pass);
		}
	}
	pthread_mutex_unlock(&mf_threads_lock);
}

int mf_thread_holds(const char *name)
{
	int held = 0;
	pthread_mutex_lock(&mf_threads_lock);
	for (struct mf_thread *t = mf_threads; t && !held; t = t->next)
		held = !strcmp(t->file.name, name);
	pthread_mutex_unlock(&mf_threads_lock);
	return held;
}

/* One more call of the thread, counted at leaf `node` (0: the trie was out of room). */
static inline void mf_thread_count(struct mf_thread *t, uint32_t node, size_t bytes)
{
	struct mf_prof_header *h = t->file.header;
	uint64_t before = h->calls_total;
	h->calls_total += (uint64_t)t->interval;
	mf_thread_next(t);
	if (mf_unlikely(!node)) {
		h->calls_lost++;
	} else {
		mf_thread_count_size(t, node, bytes);
		mf_tls.nodes = t->trie.nodes; /* (after: the file may have grown) */
		mf_tls.last_record = mf_thread_leaf(t, node);
		struct mf_node *leaf = &t->trie.nodes[node];
		leaf->calls++;
		if (__builtin_add_overflow(leaf->bytes, bytes, &leaf->bytes))
			leaf->bytes = UINT64_MAX; /* requests past 16 EiB: saturate, never wrap */
	}
	if (mf_unlikely((before ^ h->calls_total) >= MF_TIMELINE_STEP)) /* (crossed a multiple) */
		mf_thread_timeline_look(t);
}

/* The trie's root becomes the node of the thread's tag path (made if new; the root when the
 * trie is out of room), its names written first. What the walk knew of the old root goes. */
static MF_NOINLINE void mf_thread_tag_root(struct mf_thread *t)
{
	t->tag_epoch = mf_tls.tag_epoch;
	unsigned depth = mf_tls.tag_depth < MF_TAG_DEPTH ? mf_tls.tag_depth : MF_TAG_DEPTH;
	uint32_t node = 0;
	if (depth)
		mf_tags_sync(); /* (if it fails, mf_print names the tags it cannot by number) */
	for (unsigned i = 0; i < depth; i++)
		if (!(node = mf_trie_child(&t->trie, node, MF_TRIE_KEY_TAG(mf_tls.tags[i]))))
			break;
	t->trie.root = node;
	mf_unwind_hot_drop(&t->unwind);
}

/* MALLOC_FREQ_WEIGHT=time: the thread's CPU time from the profiler's return from its previous
 * recorded call to this call's entry, added to the time node under this call's leaf (the
 * return is read once the call is counted, in mf_thread_record). */
static MF_NOINLINE void mf_thread_weigh(struct mf_thread *t, uint32_t leaf, uint64_t came)
{
	uint32_t w = leaf ? mf_trie_child(&t->trie, leaf, MF_TRIE_KEY_WEIGHT) : 0;
	uint64_t ran = mf_cpu_clock_charge(&t->cpu_clock, came, t->cpu_left);
	if (w && ran) {
		struct mf_node *x = &t->trie.nodes[w];
		if (__builtin_add_overflow(x->bytes, ran, &x->bytes))
			x->bytes = UINT64_MAX;
	}
}

void mf_thread_record(struct mf_thread *t, enum mf_entry e, size_t bytes,
		      const struct mf_frame *from)
{
	uint64_t came = mf_unlikely(mf_config.weight_time) ? mf_cpu_clock_read(&t->cpu_clock) : 0;
	if (mf_unlikely(t->tag_epoch != mf_tls.tag_epoch))
		mf_thread_tag_root(t);
	uint32_t leaf = mf_unwind_leaf(&t->unwind, &t->trie, e, from);
	/* (weighed first: its node may grow the file, which would move the leaf record that
	 * mf_thread_count leaves in mf_tls for a free to find) */
	if (mf_unlikely(mf_config.weight_time))
		mf_thread_weigh(t, leaf, came);
	mf_thread_count(t, leaf, bytes);
	if (mf_unlikely(mf_config.weight_time))
		t->cpu_left = mf_cpu_clock_read(&t->cpu_clock);
}

/* (in the descriptor task, which reads the threads' names, and takes the locks in a
 * snapshot's order: the task's, the threads', each thread's grow lock, held while its file
 * may be moving) */
static long mf_thread_process_exit_apart(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mf_threads_lock);
	for (struct mf_thread *t = mf_threads; t; t = t->next) {
		pthread_mutex_lock(&t->grow_lock);
		mf_prof_finalize(t->file.header, MF_STATE_PROCESS_EXIT, t->tid);
		pthread_mutex_unlock(&t->grow_lock);
	}
	pthread_mutex_unlock(&mf_threads_lock);
	return 0;
}

/* exit(): mark every live thread's file; later calls (other destructors) still land in them. */
void mf_thread_process_exit(void)
{
	mf_thread_current(); /* (a child made without fork()'s handlers ends no file of its parent)
			      */
	if (mf_fds_apart(mf_thread_process_exit_apart, NULL) == -EPERM)
		mf_thread_process_exit_apart(NULL); /* (no task may be made: in place) */
}
