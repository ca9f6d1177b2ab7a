/* --caller: the tree top-down, the outermost caller at the root and the allocation function
 * last, as the program called. */
#include "config.h"

#include "tree.h"

static uint32_t mf_caller_key(const struct mf_model *m, const struct mf_labels *l, uint32_t sample,
			      uint64_t view, uint32_t level)
{
	(void)sample;
	if (level >= MF_VIEW_DEPTH(view))
		return MF_NONE;
	return l->of_frame[mf_model_view_frame(m, view, level)];
}

int mf_report_caller(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	static const struct mf_tree_spec spec = {
	    mf_caller_key,
	    "Outermost callers first, the allocation function last",
	    "call stack (caller -> allocation)",
	};
	return mf_tree_report(out, m, o, &spec);
}
