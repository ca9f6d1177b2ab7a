/* The library loaded into a running process (malloc_freq --attach: the debugger's dlopen, then
 * its call of malloc_freq_attached, which makes the process directory or says why it cannot)
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
/* Why recording could not start here (-errno) once malloc_freq_attached was asked; 0: it did;
 * 1: not asked yet. */
static int mf_attach_error = 1;

/* The objects loaded with the library (its dependencies, libunwind and its own): the
 * profiler's allocations reach the bootstrap arena through their slots, which detach leaves
 * pointed at the entry points (the allocator's free would be handed the arena's blocks). */
enum { MF_ATTACH_OWN = 16 };
static uintptr_t mf_attach_own[MF_ATTACH_OWN][2];
static int mf_attach_own_count;
static int mf_attach_own_full; /* more came: no slot is led back at detach */

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
	} else if (s->after && !mf_attach_own_full) {
		mf_attach_own_full = 1;
		mf_log("more than %d objects came with the library (%s and after are not noted): "
		       "detach will leave every slot led to the entry points, which pass the calls "
		       "on from then",
		       MF_ATTACH_OWN, info->dlpi_name);
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

/* Called by malloc_freq --attach, through the library's handle, once dlopen returned: the
 * process directory is made now (not at the first call, which may come much later), so that a
 * directory the process cannot make is said at once by the launcher, not found empty at detach.
 * 0: the process records; -errno: why it does not (-ENOSYS: the library did not start, which it
 * said on the process's stderr), the same each time asked (--detach asks again); -EPERM:
 * preloaded, not attached to. errno is kept. */
MF_EXPORT int malloc_freq_attached(void)
{
	if (!mf_interpose_started())
		return -ENOSYS;
	if (!mf_attached)
		return -EPERM;
	int saved = errno;
	if (__atomic_load_n(&mf_attach_error, __ATOMIC_ACQUIRE) == 1) {
		int cancel = mf_nocancel_begin();
		mf_busy_enter();
		mf_fork_hold();
		int r = mf_prof_dir_ensure(); /* (a failure is said there too, on its stderr) */
		mf_fork_release();
		mf_busy_leave();
		mf_nocancel_end(cancel);
		__atomic_store_n(&mf_attach_error, r, __ATOMIC_RELEASE);
	}
	errno = saved;
	return __atomic_load_n(&mf_attach_error, __ATOMIC_ACQUIRE);
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
	if (!mf_attach_own_full && mf_rebind_undo())
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
