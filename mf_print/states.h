/* The states a profile went through, for --html's windows: each snapshot of the processes read
 * and their live files whole, every one read as its own model (load.h, through the snapshot
 * API) with the same choice of processes and threads. A window between two states is the
 * later minus the earlier, as --between takes it. Never prints but what loading says. */
#ifndef MF_STATES_H
#define MF_STATES_H

#include <stddef.h>
#include <stdint.h>

#include "discover.h"
#include "load.h"
#include "model.h"

/* At most this many snapshots are read (the first ones by number); the live state after them. */
#define MF_STATES_MAX 200

struct mf_state_model {
	uint64_t number; /* the snapshot's; 0: the live files, read whole (--since 0) */
	struct mf_model m;
};

struct mf_states {
	struct mf_state_model *v; /* snapshots in number order, the live state last */
	size_t count;
	size_t skipped; /* snapshot numbers past MF_STATES_MAX, not read */
};

/* The states of the processes of m (its snapshot numbers, every process's, once each, then the
 * live files), found in found and chosen as like chooses (--process, --thread), into *s:
 * nothing when m's processes took no snapshot. 0 or -ENOMEM; a state that cannot be read is
 * left out (said by the loader). */
int mf_states_load(struct mf_states *s, const struct mf_model *m, const struct mf_found_list *found,
		   const struct mf_load *like, struct mf_symbolizer *sym);
void mf_states_free(struct mf_states *s);

#endif
