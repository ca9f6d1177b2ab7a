/* Frame labels as a report shows them: each frame of the model rendered once in the report's
 * style, equal texts sharing one label id, so that a report merges frames by what it shows. */
#ifndef MF_LABELS_H
#define MF_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "idset.h"
#include "model.h"

enum mf_label_style {
	MF_LABEL_FUNCTION, /* "function" */
	MF_LABEL_LINE,	   /* "function file:line", "[inlined]" marked */
};

struct mf_labels {
	uint32_t *of_frame; /* frame id -> label id */
	char **text;	    /* label id -> text */
	uint32_t *len;	    /* label id -> strlen(text) */
	size_t count, cap;
	uint32_t *rank;	      /* label id -> place in text order; NULL until mf_labels_rank */
	uint32_t *of_process; /* process -> label of its program, "[name]" */
	size_t programs;      /* distinct program labels */
	struct mf_idset set;
	void (*clean)(const char *in, char *out, size_t size);
};

/* Labels of every frame of m, and of every process's program ("[name]"). clean (NULL: none)
 * rewrites a text before it is interned: the report's escaping (mf_text_escape for text
 * reports). full_names: C++ and Rust names as demangled, not simplified. 0 or -ENOMEM. */
int mf_labels_build(struct mf_labels *l, const struct mf_model *m, enum mf_label_style style,
		    int full_names, void (*clean)(const char *in, char *out, size_t size));
/* Whether a report roots each stack under its program: when there is more than one program,
 * unless asked not to (--merge-processes). */
static inline int mf_labels_rooted(const struct mf_labels *l, int merge_processes)
{
	return !merge_processes && l->programs > 1;
}
/* The label of the program of a sample's process. */
static inline uint32_t mf_labels_program(const struct mf_labels *l, const struct mf_model *m,
					 uint32_t sample)
{
	return l->of_process[m->threads[m->samples[sample].thread].process];
}
/* The label of text (cleaned first), added if new. 0 or -ENOMEM. */
int mf_labels_add(struct mf_labels *l, const char *text, uint32_t *id);
/* Fills rank: labels in strcmp order of their texts. 0 or -ENOMEM. */
int mf_labels_rank(struct mf_labels *l);
void mf_labels_free(struct mf_labels *l);

#endif
