/* The settings' values as the library reads them (see parse.h). */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "compat.h"
#include "format.h"
#include "parse.h"

int mf_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++)
		if (*s < '0' || *s > '9' || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (unsigned long)(*s - '0'), &v))
			return -1;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Signals no handler may take: KILL and STOP cannot be caught; a fault's handler returns to
 * the instruction that faulted, so that the program, which would have died, loops (a snapshot
 * each time, until the disk fills). */
static int mf_signal_refused(int sig)
{
	switch (sig) {
	case SIGKILL:
	case SIGSTOP:
	case SIGSEGV:
	case SIGBUS:
	case SIGFPE:
	case SIGILL:
	case SIGTRAP:
	case SIGSYS:
		return 1;
	}
	return sig >= 32 && sig < SIGRTMIN; /* (glibc's own) */
}

int mf_parse_signal(const char *s)
{
	unsigned long v;
	int sig = 0;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	if (mf_parse_uint(s, 1, (unsigned long)SIGRTMAX, &v) == 0)
		sig = (int)v;
	else if (!strncmp(s, "RTMIN+", 6) && mf_parse_uint(s + 6, 0, 64, &v) == 0 &&
		 SIGRTMIN + (int)v <= SIGRTMAX)
		sig = SIGRTMIN + (int)v;
	else
		for (int k = 1; k < 32 && !sig; k++)
			if (sigabbrev_np(k) && !strcmp(s, sigabbrev_np(k)))
				sig = k;
	return mf_signal_refused(sig) ? 0 : sig;
}

uint64_t mf_parse_ms(const char *s)
{
	char whole[16];
	unsigned long w, f = 0;
	const char *dot = strchr(s, '.');
	size_t len = dot ? (size_t)(dot - s) : strlen(s);
	if (!len || len >= sizeof(whole))
		return 0;
	memcpy(whole, s, len);
	whole[len] = 0;
	if (mf_parse_uint(whole, 0, 86400, &w))
		return 0;
	if (dot) {
		size_t n = strlen(dot + 1);
		if (!n || n > 3 || mf_parse_uint(dot + 1, 0, 999, &f))
			return 0;
		for (; n < 3; n++)
			f *= 10;
	}
	uint64_t ms = (uint64_t)w * 1000 + f;
	return ms > 86400000u ? 0 : ms;
}

int mf_parse_mode(const char *s)
{
	unsigned v = 0, n = 0;
	for (; s[n]; n++) {
		if (s[n] < '0' || s[n] > '7' || n == 4)
			return -1;
		v = v * 8 + (unsigned)(s[n] - '0');
	}
	return n && (v & 0600) == 0600 && !(v & ~0644u) ? (int)v : -1;
}

int mf_dir_unsafe(const struct stat *st, uid_t uid, gid_t gid, char *why, size_t size)
{
	if (st->st_uid != uid && st->st_uid != 0) {
		mf_format(why, size,
			  "it belongs to another user (uid %u), who could remove or replace the "
			  "profiles",
			  (unsigned)st->st_uid);
		return -1;
	}
	if (st->st_mode & S_ISVTX)
		return 0;
	if (st->st_mode & S_IWOTH) {
		mf_format(why, size,
			  "any user may write in it (it is not sticky), and so remove or replace "
			  "the profiles");
		return -1;
	}
	if ((st->st_mode & S_IWGRP) && st->st_gid != gid) {
		mf_format(why, size,
			  "the users of its group (gid %u) may write in it (it is not sticky), and "
			  "so remove or replace the profiles",
			  (unsigned)st->st_gid);
		return -1;
	}
	return 0;
}
