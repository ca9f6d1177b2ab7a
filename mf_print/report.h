/* The outputs of mf_print, each built from an mf_stackset and written to a stream.
 * Return 0 or -ENOMEM (or -EIO when the stream fails). */
#ifndef MF_REPORT_H
#define MF_REPORT_H

#include <stdio.h>

#include "stacks.h"

struct mf_report_options {
	double threshold; /* percent of the total of the sort key; smaller paths are folded */
	int by_bytes;	  /* sort and threshold by bytes, not calls */
	int caller_first; /* top-down tree: outermost caller first */
	size_t files;	  /* files read, for the summary */
	size_t dirs;
};

int mf_report_summary(FILE *out, const struct mf_stackset *set, const struct mf_report_options *o);
int mf_report_tree(FILE *out, const struct mf_stackset *set, const struct mf_report_options *o);
int mf_report_threads(FILE *out, const struct mf_stackset *set, const struct mf_report_options *o);
/* One line per distinct stack: "root;...;caller;malloc COUNT", sorted; calls or bytes. */
int mf_report_collapsed(FILE *out, const struct mf_stackset *set, int bytes);

#endif
