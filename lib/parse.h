/* parse.c: the settings' values as the library reads them, shared with the launcher, which
 * checks its options by the same rules. No allocation. */
#ifndef MF_PARSE_H
#define MF_PARSE_H

#include <stdint.h>

/* A whole number of decimal digits only, from min to max, into *out; 0, or -1 if not so. */
int mf_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);
/* A signal by name (USR1, SIGUSR2, RTMIN+3) or number; 0 if it is none a handler may take:
 * KILL, STOP, a fault's (SEGV, BUS, FPE, ILL, TRAP, SYS), or glibc's own (32, 33). */
int mf_parse_signal(const char *s);
/* SECONDS, with up to three decimals, from 0.001 to 86400: in milliseconds; 0 if not so. */
uint64_t mf_parse_ms(const char *s);

#endif
