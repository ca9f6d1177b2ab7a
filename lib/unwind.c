/* Stack capture: the only file that includes <libunwind.h>. Runs inside malloc: libunwind's
 * local unwinder with per-thread caching, no malloc of our own. */
#define UNW_LOCAL_ONLY
#include "config.h"

#include <libunwind.h>

#include "mf_internal.h"

void mf_unwind_init(void)
{
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

int mf_unwind(void **pcs, int max)
{
	int n = unw_backtrace(pcs, max);
	return n < 0 ? 0 : n;
}
