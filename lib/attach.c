/* The library loaded into a running process (malloc_freq --attach: the debugger's dlopen)
 * rather than preloaded, and its work undone (malloc_freq --detach, the debugger's call of
 * malloc_freq_detach): the objects' slots that rebind.c pointed at the entry points lead to the
 * allocator again, recording and the control thread stop, the files are final, and the process
 * goes on with the real allocator. The library stays loaded (a thread may still be inside one
 * of its functions): every call that still reaches it passes straight on. Never runs inside
 * malloc; no stdio. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>

#include "fork.h"
#include "life/life.h"
#include "loaded.h"
#include "malloc_freq.h"
#include "mf_internal.h"
#include "thread.h"

int mf_attached;
int mf_detached;

/* The objects loaded with the library (its dependencies, libunwind and its own): the
 * profiler's allocations reach the bootstrap arena through their slots, which detach leaves
 * pointed at the entry points (the allocator's free would be handed the arena's blocks). */
enum { MF_ATTACH_OWN = 16 };
static uintptr_t mf_attach_own[MF_ATTACH_OWN][2];
static int mf_attach_own_count;

struct mf_attach_scan {
	uintptr_t self;
	int after; /* the library's own object was met: the objects from here on came with it */
};

static int mf_attach_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_attach_scan *s = arg;
	struct mf_got_object o;
	if (mf_got_object(info, &o))
		return 0;
	if (s->self - o.start < o.end - o.start)
		s->after = 1;
	if (s->after && mf_attach_own_count < MF_ATTACH_OWN) {
		mf_attach_own[mf_attach_own_count][0] = o.start;
		mf_attach_own[mf_attach_own_count++][1] = o.end;
	}
	return 0;
}

void mf_attach_start(void)
{
	/* Preloaded (or linked), the library is in the global scope, where a lookup through the
	 * program's handle finds this very function; loaded by dlopen into a running process, it
	 * is not (RTLD_DEFAULT would find it: it searches the caller's own scope too). */
	void *program = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	void *global = program ? dlsym(program, "malloc_freq_detach") : NULL;
	if (!global)
		dlerror(); /* (the program's dlerror must not find ours) */
	if (global == (void *)malloc_freq_detach)
		return;
	mf_attached = 1;
	struct mf_attach_scan s = {(uintptr_t)mf_attach_start, 0};
	mf_objects_iterate(mf_attach_collect, &s);
}

int mf_attach_skip(uintptr_t start)
{
	for (int i = 0; i < mf_attach_own_count; i++)
		if (start - mf_attach_own[i][0] < mf_attach_own[i][1] - mf_attach_own[i][0])
			return 1;
	return 0;
}

MF_EXPORT int malloc_freq_detach(void)
{
	if (!mf_attached)
		return -EPERM; /* (preloaded: its symbols are the program's, for good) */
	if (__atomic_exchange_n(&mf_detached, 1, __ATOMIC_ACQ_REL))
		return -EALREADY;
	int saved = errno, r = 0;
	mf_busy_enter();
	/* First the slots: from here on the program's calls go to the allocator; those under
	 * way finish in the entry points, and recording off sends them past it. */
	if (mf_rebind_undo())
		r = -EIO;
	mf_gate_set(MF_GATE_OFF, 1);
	mf_control_stop();
	mf_snapshot_exit();
	if (mf_life_on)
		mf_life_exit();
	mf_thread_process_exit();
	mf_unwind_exit();
	mf_process_detach();
	mf_busy_leave();
	errno = saved;
	return r;
}
