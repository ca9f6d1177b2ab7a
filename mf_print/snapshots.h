/* Snapshots of a process directory (snap.<n>[.<label>]/, malloc_freq_format.h): finding one by
 * number or label, reading its record, subtracting an earlier state of a thread's file from a
 * later one, and --list. Never descends into snapshots on its own: discovery does not either,
 * so a directory read whole never counts a snapshot with the live files. */
#ifndef MF_SNAPSHOTS_H
#define MF_SNAPSHOTS_H

#include <limits.h>
#include <stdio.h>

#include "discover.h"
#include "model.h"
#include "reader.h"

/* The snapshot of process directory dir that spec names: its number (1, 2, ...) or its label
 * (the last one so labelled); the directory's name in name (size bytes) and its record in
 * *rec. 0; 1 if there is none; -1 with a message in err if dir cannot be listed or the
 * snapshot's record is not valid. */
int mf_snapshot_find(const char *dir, const char *spec, char *name, size_t size,
		     struct mf_snapshot_record *rec, char *err, size_t errlen);
/* The last snapshot of dir taken by malloc_freq_reset, as mf_snapshot_find; 1 if none. */
int mf_snapshot_last_reset(const char *dir, char *name, size_t size, struct mf_snapshot_record *rec,
			   char *err, size_t errlen);
/* The newest snapshot of dir (the highest number), as mf_snapshot_find. */
int mf_snapshot_newest(const char *dir, char *name, size_t size, struct mf_snapshot_record *rec,
		       char *err, size_t errlen);
/* The bytes of the pack that snapshot record r holds threads below (0 before version 12). */
static inline uint64_t mf_snapshot_pack_len(const struct mf_snapshot_record *r)
{
	return r->version >= 12 ? r->pack_len : 0;
}
/* Reads and validates a snapshot record. 0, or -1 with a message in err. */
int mf_read_snapshot(const char *path, struct mf_snapshot_record *out, char *err, size_t errlen);
/* p becomes p minus base, an earlier state of the same thread's file (its nodes a prefix of
 * p's): counts and the header's counters subtracted, p's nodes copied first. A live file's
 * peak figures not up to date (version 6: struct mf_life) are first brought up to date with
 * peak_id, its process's last maximum, while its counts are still whole. 0, -1 with a
 * message in err (base is not an earlier state of p), or -ENOMEM. */
int mf_profile_subtract(struct mf_profile *p, const struct mf_profile *base, uint64_t peak_id,
			char *err, size_t errlen);
/* What a snapshot reads as (malloc_freq_format.h): for each thread file, the newest of it in
 * the snapshot and in those it builds on, back to a full one. */
struct mf_snap_file {
	char *name;    /* <tid>[.<n>].prof */
	char *path;    /* where it is read */
	unsigned rank; /* 0: the snapshot's own; k: the kth snapshot back */
};
struct mf_snap_state {
	struct mf_snap_file *v; /* in version order of their names (malloc'd) */
	size_t n;
	uint64_t time_ns; /* when the snapshot was taken */
	uint64_t missing; /* a snapshot it builds on that is not there (0: none), so the state
			     of the threads unchanged since is not known */
	char missing_why[PATH_MAX + 1024]; /* "" if it is not there; else why its record cannot be
					    read */
};
/* The state of snapshot name (record rec) of process directory home into *st. 0; -1 with a
 * message in err (a directory or `ended` list that cannot be read); 1 when the pack lacks
 * threads the snapshot holds (said on stderr, pack.h: mf_pack_upto); -ENOMEM. */
int mf_snapshot_state(const char *home, const char *name, const struct mf_snapshot_record *rec,
		      struct mf_snap_state *st, char *err, size_t errlen);
/* Says on stderr that snapshot name of home builds on st->missing, which is not there or cannot
 * be read, and so (what the reader lacks). */
void mf_snapshot_say_missing(const char *home, const char *name, const struct mf_snap_state *st,
			     const char *so);
/* The file of st named name; NULL if st has none. */
const struct mf_snap_file *mf_snapshot_state_find(const struct mf_snap_state *st, const char *name);
void mf_snapshot_state_free(struct mf_snap_state *st);
/* p, read from f of st, as the snapshot took it: a running thread's copy taken by an earlier
 * snapshot of the chain ends when this one was taken (every copy's end_ns is its time). */
void mf_snapshot_state_fix(const struct mf_snap_state *st, const struct mf_snap_file *f,
			   struct mf_profile *p);
/* Every snapshot of process directory dir whose record reads, in number order, into *marks
 * (malloc'd; NULL when none) and *n. 0, or -ENOMEM; a directory that cannot be listed has
 * none. */
int mf_snapshot_marks(const char *dir, struct mf_snapshot_mark **marks, uint32_t *n);
/* --list: each directory's snapshots, with when they were taken, their labels and totals,
 * and its program and pid as name(dir, buf, size, &pid) says them. 0, 1 after an error said
 * on stderr, or -ENOMEM / -EIO. */
int mf_snapshot_list(FILE *out, const struct mf_found_list *found,
		     void (*name)(const char *dir, char *buf, size_t size, uint64_t *pid));

#endif
