/* The merged, symbolized view of profiles: every distinct (thread, call stack, entry point)
 * with its calls and bytes, frames as interned labels. Every report is built from this. */
#ifndef MF_STACKS_H
#define MF_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "symbolize.h"

struct mf_stack {
	uint32_t *labels; /* outermost frame first; the entry point is not among them */
	uint32_t depth;
	uint32_t entry;	 /* enum mf_entry */
	uint32_t thread; /* index into mf_stackset.threads */
	uint64_t calls;	 /* scaled by the file's sample rate */
	uint64_t bytes;
};

struct mf_thread_info {
	const struct mf_profile *profile;
	uint64_t calls, bytes; /* scaled */
};

struct mf_stackset {
	struct mf_stack *stacks;
	size_t count, capacity;
	char **labels; /* label id -> text */
	size_t nlabels, labels_capacity;
	struct mf_label_entry *label_index;
	uint32_t entry_label[MF_ENTRY_COUNT];
	struct mf_thread_info *threads;
	size_t nthreads;
	uint64_t calls, bytes;
	uint64_t entry_calls[MF_ENTRY_COUNT], entry_bytes[MF_ENTRY_COUNT];
	uint64_t lost, nested; /* from the headers, unscaled */
	uint64_t seen;	       /* calls the threads saw, recorded or not (headers' calls_total) */
	size_t incomplete;
	int estimated;	/* some file was sampled: counts are estimates */
	int full_names; /* C++ names with template arguments and parameters */
};

enum mf_label_style {
	MF_LABEL_FUNCTION, /* "function" */
	MF_LABEL_LINE,	   /* "function file:line", "[inlined]" marked */
};

/* Builds the set from profiles (all already validated against their module maps). Returns 0
 * or -ENOMEM. */
int mf_stacks_build(struct mf_stackset *set, const struct mf_profile *profiles, size_t count,
		    struct mf_symbolizer *sym, enum mf_label_style style, int full_names);

void mf_stacks_free(struct mf_stackset *set);

/* The label of the function that called the allocator (the innermost frame). */
uint32_t mf_stack_site(const struct mf_stackset *set, const struct mf_stack *s);

extern const char *const mf_entry_names[MF_ENTRY_COUNT];

#endif
