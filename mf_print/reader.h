/* Reading profile directories: the per-thread .prof files and the module map, validated
 * against malloc_freq_format.h. Nothing read is trusted: every index and size is checked, and
 * allocations are bounded by the file's size. */
#ifndef MF_READER_H
#define MF_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "malloc_freq_format.h"

struct mf_modmap {
	uint32_t count;
	struct mf_module *mods; /* path and build-id as the process saw them */
	uint32_t cut;		/* the header's count, when the file holds fewer (cut short):
				   only the whole ones before the cut were read */
};

struct mf_profile {
	char *path;
	struct mf_prof_header header; /* validated copy */
	uint64_t node_count;
	const struct mf_node *nodes; /* validated: parent < index; in the file's mapping, the
					caller's data, or a copy (owned) */
	int complete;		     /* finalized at thread or process exit */
	uint64_t cut;		     /* the header's node count, when the file holds fewer (cut
					short): only the whole ones before the cut were read */
	int zeros;		     /* with cut: the file is not short, node node_count is zeros
					(never written: no node is all zeros but the root) */
	void *map;		     /* the file's mapping, or the copy; NULL: nodes are the
					caller's */
	size_t map_len;		     /* of a mapping; 0 for a copy */
	/* (version 9) the thread's timeline as read: the records whose time and calls never go
	 * back (a record seen while the writer was making room is left out) */
	uint32_t timeline_count;
	struct mf_timeline_record timeline[MF_TIMELINE_RECORDS];
	uint64_t timeline_from_ns; /* (an earlier state subtracted) its time: the records and the
				      totals are those since then */
};

/* A leaf's blocks and bytes still live when its file was read (frees are counted after
 * blocks: a file read meanwhile may show more frees than blocks, then none). */
static inline uint64_t mf_life_live_blocks(const struct mf_life *l)
{
	return l->blocks > l->frees ? l->blocks - l->frees : 0;
}
static inline uint64_t mf_life_live_bytes(const struct mf_life *l)
{
	return l->bytes > l->freed_bytes ? l->bytes - l->freed_bytes : 0;
}

/* Whether p's leaves' peak figures may be behind (version 6, malloc_freq_format.h, struct
 * mf_life): a live thread file with lifetimes, not a snapshot (brought up to date when taken). */
static inline int mf_profile_peaks_lazy(const struct mf_profile *p)
{
	return p->header.version >= 6 && (p->header.records & MF_RECORD_LIFE) &&
	       p->header.state != MF_STATE_SNAPSHOT;
}

/* A leaf's record as of its process's last maximum, peak_id: one not changed since then held
 * at the peak what it holds now. */
static inline void mf_life_settle_record(struct mf_life *l, uint64_t peak_id)
{
	if (l->peak_seen == peak_id)
		return;
	l->peak_blocks = mf_life_live_blocks(l);
	l->peak_bytes = mf_life_live_bytes(l);
	l->peak_seen = peak_id;
}

/* The slots of a leaf's struct mf_life in p: none without lifetimes, fewer before version 8. */
static inline uint64_t mf_profile_life_slots(const struct mf_profile *p)
{
	if (!(p->header.records & MF_RECORD_LIFE))
		return 0;
	return p->header.version >= 8 ? MF_LIFE_SLOTS : MF_LIFE_SLOTS_V7;
}

/* Whether p's leaves hold max_blocks and lifetime_ns (version 8 with lifetimes). */
static inline int mf_profile_life_max(const struct mf_profile *p)
{
	return p->header.version >= 8 && (p->header.records & MF_RECORD_LIFE);
}

/* The struct mf_life after leaf node i of nodes (in p's version: what an older one lacks is
 * zeros), into *out; and back from *l (only the fields p's version has). */
static inline void mf_profile_life_get(const struct mf_profile *p, const struct mf_node *nodes,
				       uint64_t i, struct mf_life *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out, &nodes[i + 1 + MF_LEAF_SLOTS],
	       mf_profile_life_slots(p) * sizeof(struct mf_node));
}
static inline void mf_profile_life_put(const struct mf_profile *p, struct mf_node *nodes,
				       uint64_t i, const struct mf_life *l)
{
	memcpy(&nodes[i + 1 + MF_LEAF_SLOTS], l, mf_profile_life_slots(p) * sizeof(struct mf_node));
}

/* The slots after node x that are its record, not nodes (malloc_freq_format.h, version 4):
 * a leaf's struct mf_leaf, a dense size histogram's counts. */
static inline uint64_t mf_profile_slots_after(const struct mf_profile *p, const struct mf_node *x)
{
	if (p->header.version < 4)
		return 0;
	if (x->module == MF_MODULE_ENTRY)
		return MF_LEAF_SLOTS + mf_profile_life_slots(p);
	return x->module == MF_MODULE_SIZES ? MF_SIZES_SLOTS : 0;
}

/* Reads and validates one .prof file, mapped (not copied: a profile of millions of stacks is
 * read once, where it lies; the pages checked are let go as the check goes on). Returns 0; 1
 * for a file its thread never got to write (empty or no header: nothing recorded, not an
 * error), with a message in err; or -1 with a message (no file name) in err. A file cut short,
 * or whose header counts nodes it does not hold (zeros where they would be: a sparse file),
 * gives 0 with out->cut set and what is wrong in err: the caller says so, and uses the nodes
 * read or not. A file cut shorter while it is mapped raises SIGBUS. */
int mf_read_profile(const char *path, struct mf_profile *out, char *err, size_t errlen);
/* The same for a file's contents already in memory (path is only remembered); its nodes are
 * data's, which must outlive out, unless data is not aligned for them (then they are
 * copied). */
int mf_parse_profile(const unsigned char *data, size_t size, const char *path,
		     struct mf_profile *out, char *err, size_t errlen);
/* Says that nodes from .. upto are not needed now: a mapping's pages holding them go (read
 * again, they come back from the file). */
void mf_profile_release(struct mf_profile *p, uint64_t from, uint64_t upto);
/* For a pass over p's nodes, first to last, at node: the pages behind it go every 8 MiB of
 * nodes past *mark (0 at the start), so that a large file is never held whole. */
void mf_profile_release_behind(struct mf_profile *p, uint64_t *mark, uint64_t node);
void mf_profile_free(struct mf_profile *p);

/* Same for a module map; the map may then index frames of profiles of that directory. A map
 * cut short gives 0 with out->cut set and what is wrong in err. */
int mf_read_modules(const char *path, struct mf_modmap *out, char *err, size_t errlen);
int mf_parse_modules(const unsigned char *data, size_t size, struct mf_modmap *out, char *err,
		     size_t errlen);
void mf_modmap_free(struct mf_modmap *m);

/* Reads and validates a process record (a copy in *out, its strings terminated). 0, or -1 with
 * a message in err. */
int mf_read_process(const char *path, struct mf_process_record *out, char *err, size_t errlen);
int mf_parse_process(const unsigned char *data, size_t size, struct mf_process_record *out,
		     char *err, size_t errlen);

/* Checks a profile's nodes against its module map (count modules). 0 or -1 with err. */
int mf_profile_check_modules(struct mf_profile *p, uint32_t count, char *err, size_t errlen);

/* Reads a whole file into memory (at most max bytes). Returns 0 or -errno; *data is malloc'd. */
int mf_read_file(const char *path, size_t max, unsigned char **data, size_t *size);
/* Maps a whole file read-only (at most max bytes; an empty one is not mapped: *data NULL).
 * Returns 0 or -errno; munmap(*data, *size) when done. */
int mf_map_file(const char *path, size_t max, unsigned char **data, size_t *size);

#endif
