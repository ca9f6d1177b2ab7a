/* The call tree both tree reports print (report_tree.c, report_caller.c): each sample's path
 * of labels, given level by level by the report, merged where the labels are equal; paths
 * below the threshold folded into one line that says how much they hold. */
#ifndef MF_TREE_H
#define MF_TREE_H

#include <stdio.h>

#include "labels.h"
#include "model.h"
#include "report.h"

struct mf_tree_spec {
	/* The label of sample's path at level (0: the root), MF_NONE past its end; view is
	 * mf_model_view(m, sample). */
	uint32_t (*key)(const struct mf_model *m, const struct mf_labels *l, uint32_t sample,
			uint64_t view, uint32_t level);
	const char *heading; /* what the tree shows, first */
	const char *column;  /* the heading of the path column */
};

int mf_tree_report(FILE *out, const struct mf_model *m, const struct mf_report_options *o,
		   const struct mf_tree_spec *spec);

#endif
