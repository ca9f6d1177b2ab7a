/* parse.c: the settings' values as the library reads them, shared with the launcher, which
 * checks its options by the same rules: the numbers, signals and modes, and the directory
 * profiles are made in. No allocation. */
#ifndef MF_PARSE_H
#define MF_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A whole number of decimal digits only, from min to max, into *out; 0, or -1 if not so. */
int mf_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);
/* A signal by name (USR1, SIGUSR2, RTMIN+3) or number; 0 if it is none a handler may take:
 * KILL, STOP, a fault's (SEGV, BUS, FPE, ILL, TRAP, SYS), or glibc's own (32, 33). */
int mf_parse_signal(const char *s);
/* SECONDS, with up to three decimals, from 0.001 to 86400: in milliseconds; 0 if not so. */
uint64_t mf_parse_ms(const char *s);
/* MALLOC_FREQ_MODE: octal digits (600, 0640, 644): a profile file's mode, which must let its
 * owner read and write it and may let others read it, nothing more; -1 if not so. */
int mf_parse_mode(const char *s);
/* The mode of a profile directory holding files of mode m: each read bit with its search bit. */
static inline unsigned mf_dir_mode(unsigned m)
{
	return m | (m & 0444) >> 2;
}
/* Whether a directory profiles are made in (st) keeps them from other users, for a process of
 * effective user uid and group gid: it belongs to uid or root, and no one else may remove or
 * replace entries in it (others' and, unless it is gid, its group's write permission only
 * with the sticky bit). 0; or -1 with why not in why (ending "... replace the profiles"). */
int mf_dir_unsafe(const struct stat *st, uid_t uid, gid_t gid, char *why, size_t size);

#endif
