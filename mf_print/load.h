/* Reading discovered profile directories into the model: the module map, then each thread's
 * file, checked and added; what cannot be read is named on stderr and the rest is used. */
#ifndef MF_LOAD_H
#define MF_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "discover.h"
#include "model.h"

struct mf_load {
	int have_thread; /* --thread: only threads with this id */
	uint64_t thread;
	/* what was read */
	size_t files, dirs;
	size_t threads; /* thread files added to the model */
	int failed;	/* some input could not be read */
};

/* Reads dir into m. 0, or -ENOMEM (errors of the input are counted in ld->failed). */
int mf_load_dir(struct mf_model *m, const struct mf_found *dir, struct mf_load *ld);

#endif
