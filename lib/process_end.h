/* process_end.c: a process record's end as its parent writes it (the library's wait wrappers,
 * the launcher), and the record access both need. */
#ifndef MF_PROCESS_END_H
#define MF_PROCESS_END_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "malloc_freq_format.h"

#define MF_PROCESS_IMAGES_MAX 256 /* malloc_freq.<pid>.<n> looked at for one pid */
/* A record's flags that say what the process is, kept when its end is written */
#define MF_PROCESS_KEPT (MF_PROCESS_CMDLINE_CUT | MF_PROCESS_RAW_EXIT | MF_PROCESS_DETACHED)

uint64_t mf_process_now_ns(void); /* CLOCK_REALTIME, in ns */
/* Reads a record's first part from fd into r; 1 if it is a process record of pid. */
int mf_process_peek(int fd, struct mf_process_record *r, uint64_t pid);
/* Writes a record's end (state, status, flags, end_ns) at fd. */
void mf_process_poke_end(int fd, const struct mf_process_record *r);
/* The name of pid's n-th profile directory in dir (dir/malloc_freq.<pid>[.<n>], as the
 * library numbers them) into path; its length. */
size_t mf_process_dir_path(char *path, size_t size, const char *dir, pid_t pid, unsigned n);
/* A child's end as wait returned it (wstatus: an exit or a signal; nothing else is an end),
 * written into the record of its last image: the highest numbered directory of its pid in
 * dir whose record names this process its parent and has no end yet (an image that exits
 * writes its own). */
void mf_process_end_by_parent(const char *dir, pid_t pid, int wstatus);

#endif
