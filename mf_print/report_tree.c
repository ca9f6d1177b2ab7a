/* The default report's tree: the allocation function at the root, then the function that
 * called it, then its caller, and so on outwards. */
#include "config.h"

#include "tree.h"

static uint32_t mf_callee_key(const struct mf_model *m, const struct mf_labels *l, uint32_t sample,
			      uint64_t view, uint32_t level)
{
	(void)sample;
	if (level >= MF_VIEW_DEPTH(view))
		return MF_NONE;
	return l->of_frame[mf_model_view_frame(m, view, MF_VIEW_DEPTH(view) - 1 - level)];
}

int mf_report_tree(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	static const struct mf_tree_spec spec = {
	    mf_callee_key,
	    "The allocation function first, then who called it",
	    "call stack (allocation <- caller)",
	};
	return mf_tree_report(out, m, o, &spec);
}
