/* The walk of a processor whose frames the cached walk does not know yet (AArch64): every
 * stack goes to libunwind (capture.c), no rule is read, no stack is kept among the hot ones.
 * The interfaces of cfi.c and walk.c (internal.h). Runs inside malloc. */
#include "config.h"

#include "unwind/internal.h"

int mf_cfi_find(uintptr_t pc, struct mf_cfi_rule *rule)
{
	(void)pc;
	*rule = (struct mf_cfi_rule){.kind = MF_CFI_UNKNOWN};
	return MF_CFI_NONE;
}

int mf_walk(struct mf_walk_stacks *ws, int max, uintptr_t pc, uintptr_t sp, uintptr_t bp)
{
	(void)max, (void)pc, (void)sp, (void)bp;
	ws->cut = 0; /* (not one frame known: libunwind says what the stack is) */
	return MF_WALK_SLOW;
}

int mf_walk_checks(const struct mf_walk_stacks *ws, struct mf_walk_check *c, int max,
		   const uintptr_t *bp)
{
	(void)ws, (void)c, (void)max, (void)bp;
	return -1;
}
