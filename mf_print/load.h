/* Reading discovered profile directories into the model: the process record and the module
 * map, then each thread's file, checked and added; what cannot be read is named on stderr and
 * the rest is used. --process and --thread choose what is added. */
#ifndef MF_LOAD_H
#define MF_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "discover.h"
#include "model.h"

struct mf_load {
	/* what to read */
	int have_thread; /* --thread: only threads with this id */
	uint64_t thread;
	char **process; /* --process: only processes of these pids or program names */
	size_t nprocess;
	/* which state of each process (snapshots.h) */
	const char *top;  /* --snapshot: that snapshot's files instead of the live ones */
	const char *base; /* --since, --between: that snapshot subtracted; NULL: the last
			     malloc_freq_reset's, if any, unless whole */
	int whole;	  /* --since 0: nothing subtracted */
	/* what was read */
	size_t files, dirs;
	size_t dirs_used; /* of them, those with a thread added to the model */
	size_t threads;	  /* thread files added to the model */
	size_t passed;	  /* thread files of chosen processes left out by --thread */
	size_t chosen;	  /* processes chosen by --process (all, without it) */
	size_t unchosen;  /* processes left out by --process */
	char **programs;  /* the programs met, chosen or not (for a message when none is) */
	size_t nprograms, cap_programs;
	size_t resets;		  /* processes whose counts start at their last malloc_freq_reset */
	size_t snapshots;	  /* snapshot directories named as directories to read, */
	char snapshot[64];	  /* the name of the first of them (snap.N[.LABEL]) */
	size_t lacking;		  /* processes left out: they have no snapshot asked for */
	char *lacking_dir;	  /* the first of them, */
	const char *lacking_spec; /* and the snapshot it lacks */
	int failed;		  /* some input could not be read */
};

/* Reads dir into m. 0, or -ENOMEM (errors of the input are counted in ld->failed). */
int mf_load_dir(struct mf_model *m, const struct mf_found *dir, struct mf_load *ld);
/* Says which processes were left out for lacking the snapshot asked for (--snapshot,
 * --since, --between): a process without it has no window to show, and the others do.
 * Returns 1 when none had it (an error), else 0. */
int mf_load_lacking(const struct mf_load *ld);
void mf_load_free(struct mf_load *ld);

/* What a (validated) process record says of its process, in info: its strings point into rec
 * and cmdline (MF_CMDLINE_LEN + 1 bytes: the arguments joined by spaces); the end of a record
 * still running is judged by mf_load_liveness. The name is left to the caller. */
void mf_load_process_info(struct mf_process *info, const struct mf_process_record *rec,
			  char *cmdline);

/* The program of process directory dir and its pid (0: not known), as the reports name them:
 * argv[0]'s base name, else its executable's, else "pid N". What cannot be read is not said
 * (the report that reads it says it). */
void mf_load_program(const char *dir, char *buf, size_t size, uint64_t *pid);

/* How a record still running at pid, started at start_ticks, stands now: MF_END_RUNNING if
 * that process is alive, else MF_END_UNRECORDED. */
int mf_load_liveness(uint64_t pid, uint64_t start_ticks);

#endif
