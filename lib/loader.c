/* The dynamic loader's write lock, watched from outside. glibc holds it inside dl_iterate_phdr
 * and while dlopen/dlclose change the list of objects, and does not reset it in a forked child
 * (it resets its other loader locks): a child forked while another thread held it waits for
 * ever in dl_iterate_phdr, which unwinding needs. The lock is found once at start (finding it
 * at fork could wait for a thread that waits for the fork) as the one recursive mutex in
 * ld.so's data that a dl_iterate_phdr callback holds and that is released on return; a
 * child reads it to know whether it may look, and a thread whether it holds it (a program's
 * dl_iterate_phdr callback, or one it left by longjmp, which leaves the lock held). */
#include "config.h"

#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"

enum { MF_LOADER_CANDIDATES = 4 };

struct mf_loader_search {
	struct __pthread_mutex_s *found[MF_LOADER_CANDIDATES];
	unsigned count[MF_LOADER_CANDIDATES];
	int n;
	int searched;
};

static struct __pthread_mutex_s *mf_loader_lock; /* NULL: not found */
int mf_loader_stuck;
static MF_TLS pid_t mf_loader_tid; /* the calling thread's id, once asked for (0: not yet) */
/* Where the lock was not found: the frame of the program's dl_iterate_phdr running in this
 * thread (the outermost, if several), or 0. */
static MF_TLS uintptr_t mf_loader_mark;

/* The writable segment of the object that holds _r_debug (ld.so's own data). */
static int mf_loader_segment(const struct dl_phdr_info *info, char **lo, char **hi)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		char *start = (char *)(info->dlpi_addr + p->p_vaddr);
		if (p->p_type == PT_LOAD && (p->p_flags & PF_W) && (char *)&_r_debug >= start &&
		    (char *)&_r_debug < start + p->p_memsz) {
			*lo = start;
			*hi = start + p->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* In the callback: every recursive mutex there that this thread holds. */
static int mf_loader_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_loader_search *s = arg;
	char *lo, *hi;
	if (!mf_loader_segment(info, &lo, &hi))
		return 0;
	s->searched = 1;
	int tid = gettid();
	lo = (char *)(((uintptr_t)lo + 3) & ~(uintptr_t)3);
	for (char *c = lo; c + sizeof(pthread_mutex_t) <= hi; c += 4) {
		struct __pthread_mutex_s *m = (struct __pthread_mutex_s *)c;
		if (m->__owner == tid && m->__lock != 0 && m->__count > 0 &&
		    (m->__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP) {
			if (s->n == MF_LOADER_CANDIDATES)
				return 1;
			s->found[s->n] = m;
			s->count[s->n++] = m->__count;
		}
	}
	return 1;
}

void mf_loader_init(void)
{
	struct mf_loader_search s;
	memset(&s, 0, sizeof(s));
	mf_objects_iterate(mf_loader_visit, &s);
	if (!s.searched)
		return;
	/* The one released (or counted down once) on return; a lock the thread held before
	 * the call (it is inside dlopen, say) stays as it was. */
	struct __pthread_mutex_s *lock = NULL;
	int tid = gettid();
	for (int i = 0; i < s.n; i++) {
		struct __pthread_mutex_s *m = s.found[i];
		if (m->__owner != tid || m->__count == s.count[i] - 1) {
			if (lock)
				return; /* two: cannot tell */
			lock = m;
		}
	}
	mf_loader_lock = lock;
}

int mf_loader_held(uintptr_t sp)
{
	const struct __pthread_mutex_s *m = mf_loader_lock;
	if (mf_unlikely(!m)) /* (a callback runs below its dl_iterate_phdr's frame) */
		return mf_loader_mark && sp < mf_loader_mark;
	int owner = __atomic_load_n(&m->__owner, __ATOMIC_RELAXED);
	if (mf_likely(!owner))
		return 0;
	if (!mf_loader_tid)
		mf_loader_tid = gettid();
	return owner == mf_loader_tid;
}

int mf_loader_iterate(mf_loader_iterate_fn *real, int (*cb)(struct dl_phdr_info *, size_t, void *),
		      void *arg)
{
	if (mf_likely(mf_loader_lock))
		return real(cb, arg);
	/* A mark below this frame was left by a callback that never returned (longjmp, a
	 * throw): it is gone. */
	uintptr_t here = (uintptr_t)__builtin_frame_address(0), outer = mf_loader_mark;
	if (outer <= here)
		outer = 0;
	mf_loader_mark = outer ? outer : here;
	int r = real(cb, arg);
	mf_loader_mark = outer;
	return r;
}

void mf_loader_postfork_child(void)
{
	mf_loader_tid = 0;
	if (mf_loader_lock) /* (by the lock word: a holder sets its owner only after taking it,
			       and clears it before letting go) */
		mf_loader_stuck = __atomic_load_n(&mf_loader_lock->__lock, __ATOMIC_RELAXED) != 0;
	else /* not found: judge by the loader's debugger state, which misses some holders */
		mf_loader_stuck = _r_debug.r_state != RT_CONSISTENT;
}
