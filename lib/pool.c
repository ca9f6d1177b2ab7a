/* Where thread states live: slots of one size in a few mappings (one slot, then as many as all
 * before each time), not a mapping per thread: a process's mappings are bounded
 * (vm.max_map_count), and so would be its threads. Reserved as needed, for what is reserved
 * counts against RLIMIT_AS (at about 1 MiB a slot, 64 at once took half of a 128 MiB limit). A slot
 * is handed out at a thread's start and taken back at its end, emptied (zero pages again, holding
 * no memory). No malloc. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "mf_internal.h"

enum { MF_POOL_FIRST = 1 };

static size_t mf_pool_slot_size;
static unsigned char *mf_pool_next, *mf_pool_end; /* the newest mapping's unused slots */
static size_t mf_pool_mapped;			  /* slots in all mappings so far */
static void *mf_pool_free;			  /* slots given back, each holding the next */
static pthread_mutex_t mf_pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* A new mapping of as many slots as all before it (MF_POOL_FIRST at first); 0, or -1. Its
 * slots are made accessible one by one as they are first handed out (mf_pages_reserve). */
static int mf_pool_grow(void)
{
	size_t n = mf_pool_mapped ? mf_pool_mapped : MF_POOL_FIRST;
	/* (a state is touched here and there: huge pages would fill in 2 MiB for each) */
	void *p = mf_pages_reserve(n * mf_pool_slot_size);
	if (!p)
		return -1;
	mf_pool_next = p;
	mf_pool_end = mf_pool_next + n * mf_pool_slot_size;
	mf_pool_mapped += n;
	return 0;
}

void *mf_pool_take(size_t size)
{
	void *slot = NULL;
	int saved = errno;
	pthread_mutex_lock(&mf_pool_lock);
	if (!mf_pool_slot_size)
		mf_pool_slot_size = mf_pages_round(size);
	if (size > mf_pool_slot_size) {
		/* (one size only: a caller's mistake) */
	} else if (mf_pool_free) {
		slot = mf_pool_free;
		memcpy(&mf_pool_free, slot, sizeof(void *));
		memset(slot, 0, sizeof(void *));
	} else if ((mf_pool_next < mf_pool_end || !mf_pool_grow()) &&
		   !mprotect(mf_pool_next, mf_pool_slot_size, PROT_READ | PROT_WRITE)) {
		slot = mf_pool_next;
		mf_pool_next += mf_pool_slot_size;
	}
	pthread_mutex_unlock(&mf_pool_lock);
	errno = saved;
	return slot;
}

void mf_pool_give(void *slot)
{
	int saved = errno;
	/* Zero pages again; but pages locked by mlockall() are not given back, nor zeroed, so
	 * then the slot is emptied by hand (the next thread's state would start from this one's
	 * otherwise). */
	if (madvise(slot, mf_pool_slot_size, MADV_DONTNEED))
		memset(slot, 0, mf_pool_slot_size);
	errno = saved;
	pthread_mutex_lock(&mf_pool_lock);
	memcpy(slot, &mf_pool_free, sizeof(void *));
	mf_pool_free = slot;
	pthread_mutex_unlock(&mf_pool_lock);
}

void mf_pool_reset(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	memcpy(&mf_pool_lock, &fresh, sizeof(fresh));
}
