/* --html's windows: the counts of every state a profile went through (states.h), each sample
 * of each state placed on the page's trie of frame labels, written as each state's change
 * from the one before (a window between two states is then a sum of changes, equal to
 * --between's subtraction). The stacks beyond the busiest MF_HTML_WINDOW_STACKS are folded
 * into one "(other stacks)" frame per thread, so that the page grows with the number of
 * snapshots times that bound at most. Never prints. */
#ifndef MF_REPORT_HTML_WINDOW_H
#define MF_REPORT_HTML_WINDOW_H

#include <stdint.h>
#include <stdio.h>

#include "labels.h"
#include "model.h"
#include "pathtrie.h"
#include "states.h"

/* Stacks kept by calls, and by bytes, at their live counts: the rest are folded. */
#define MF_HTML_WINDOW_STACKS 500
/* The additive counters a window carries: calls, bytes, time, temporaries. */
#define MF_HTML_WINDOW_METRICS 4

struct mf_html_delta {
	uint32_t state, row;
	int64_t v[MF_HTML_WINDOW_METRICS];
};

struct mf_html_windows {
	struct mf_pathtrie rows; /* a row: (its leaf on the page's trie, its thread code) */
	uint32_t *proc;		 /* by row: its process in the page's model; MF_NONE */
	uint64_t *last;		 /* by row and metric: its counts in the last state read */
	size_t cap_proc, cap_last;
	struct mf_html_delta *deltas; /* by state, then row */
	size_t ndeltas, cap_deltas;
	uint8_t *present;  /* by state and process of the page's model: in that state */
	uint32_t *by_name; /* the page's threads by process and file name */
	uint32_t *row_of;  /* by row: the row it is written as (folded rows share one) */
	uint32_t nwritten; /* rows written */
	size_t nrows;	   /* rows before folding */
	int metric[MF_HTML_WINDOW_METRICS];
	int nmetrics;
};

/* Every state of s placed on trie t (nodes, and labels in lines and fns, added where a
 * state has a stack the page's model does not; *fn_of grown to lines->count). 0 or -ENOMEM. */
int mf_html_windows_map(struct mf_html_windows *w, const struct mf_model *m,
			const struct mf_states *s, struct mf_pathtrie *t, struct mf_labels *lines,
			struct mf_labels *fns, uint32_t **fn_of, int rooted, int full_names);
/* The page's "windows" member (with its leading comma); held: the page's metrics (nheld).
 * 0 or -ENOMEM. */
int mf_html_windows_write(FILE *out, const struct mf_html_windows *w, const struct mf_model *m,
			  const struct mf_states *s, const int *held, int nheld);
void mf_html_windows_free(struct mf_html_windows *w);

#endif
