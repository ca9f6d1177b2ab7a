/* Settings of libmalloc_freq, read once at start from the environment (secure_getenv) and
 * validated: an unusable value is named on stderr and its default used. No malloc. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mf_internal.h"

#define MF_SAMPLE_MAX 1000000000ul

struct mf_config mf_config = {.depth = MF_DEPTH_DEFAULT, .sample = 1};

static int mf_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (ULONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void mf_config_dir(void)
{
	const char *d = secure_getenv("MALLOC_FREQ_DIR");
	char *out = mf_config.dir;
	size_t size = sizeof(mf_config.dir);
	if (d && !*d) {
		mf_log("MALLOC_FREQ_DIR is empty; using the current directory");
		d = NULL;
	}
	if (d && d[0] == '/') {
		if (strlen(d) >= size - 64)
			goto too_long;
		strcpy(out, d);
		return;
	}
	/* Relative (or unset): anchor it to the directory at start, so a later chdir moves
	 * nothing. */
	if (!getcwd(out, size - 64)) {
		mf_log("cannot read the current directory (%s); profiles go to /tmp",
		       strerrordesc_np(errno));
		strcpy(out, "/tmp");
	}
	if (d) {
		size_t n = strlen(out);
		if (n + 1 + strlen(d) >= size - 64)
			goto too_long;
		out[n] = '/';
		strcpy(out + n + 1, d);
	}
	return;
too_long:
	mf_log("MALLOC_FREQ_DIR is longer than %zu bytes; using /tmp", size - 64);
	strcpy(out, "/tmp");
}

/* MALLOC_FREQ_CACHE, else $XDG_CACHE_HOME/malloc_freq, else $HOME/.cache/malloc_freq; "off"
 * (or no usable default) leaves mf_config.cache empty. */
static void mf_config_cache(void)
{
	const char *d = secure_getenv("MALLOC_FREQ_CACHE");
	size_t room = sizeof(mf_config.cache) - 64; /* for "/<build-id>.rules.<pid>" */
	if (d && !strcmp(d, "off"))
		return;
	if (d && (d[0] != '/' || strlen(d) >= room)) {
		mf_log("MALLOC_FREQ_CACHE=\"%s\" is not an absolute path shorter than %zu bytes; "
		       "the rule cache is off",
		       d, room);
		return;
	}
	if (d) {
		strcpy(mf_config.cache, d);
		return;
	}
	const char *base = secure_getenv("XDG_CACHE_HOME"), *sub = "/malloc_freq";
	if (!base || base[0] != '/') {
		base = secure_getenv("HOME");
		sub = "/.cache/malloc_freq";
	}
	if (base && base[0] == '/' && strlen(base) + strlen(sub) < room)
		mf_format(mf_config.cache, sizeof(mf_config.cache), "%s%s", base, sub);
}

void mf_config_load(void)
{
	mf_config_dir();
	mf_config_cache();
	const char *s = secure_getenv("MALLOC_FREQ_DEPTH");
	unsigned long v;
	if (s) {
		if (mf_parse_uint(s, 1, MF_DEPTH_MAX, &v) == 0)
			mf_config.depth = (unsigned)v;
		else
			mf_log(
			    "MALLOC_FREQ_DEPTH=\"%s\" is not a whole number from 1 to %d; using %d",
			    s, MF_DEPTH_MAX, MF_DEPTH_DEFAULT);
	}
	s = secure_getenv("MALLOC_FREQ_SAMPLE");
	if (s) {
		if (mf_parse_uint(s, 1, MF_SAMPLE_MAX, &v) == 0)
			mf_config.sample = v;
		else
			mf_log("MALLOC_FREQ_SAMPLE=\"%s\" is not a whole number from 1 to %lu; "
			       "recording every call",
			       s, MF_SAMPLE_MAX);
	}
	mf_config.sample_log = mf_config.sample > 1 ? mf_ln1p(-1.0 / (double)mf_config.sample) : 0;
	s = secure_getenv("MALLOC_FREQ_UNWIND");
	if (s) {
		if (!strcmp(s, "cached"))
			mf_config.unwind = MF_UNWIND_CACHED;
		else if (!strcmp(s, "libunwind"))
			mf_config.unwind = MF_UNWIND_LIBUNWIND;
		else if (!strcmp(s, "check"))
			mf_config.unwind = MF_UNWIND_CHECK;
		else
			mf_log("MALLOC_FREQ_UNWIND=\"%s\" is not one of cached, libunwind, check; "
			       "using cached",
			       s);
	}
	mf_config.hot = mf_config.sample == 1 && mf_config.unwind == MF_UNWIND_CACHED;
	s = secure_getenv("MALLOC_FREQ_LIFETIMES");
	if (s && strcmp(s, "0") && strcmp(s, "1"))
		mf_log("MALLOC_FREQ_LIFETIMES=\"%s\" is neither 0 nor 1; lifetimes are off", s);
	else if (s && !strcmp(s, "1") && mf_config.sample > 1)
		mf_log("MALLOC_FREQ_LIFETIMES=1 does not go with MALLOC_FREQ_SAMPLE yet; lifetimes "
		       "are off");
	else
		mf_config.lifetimes = s && !strcmp(s, "1");
	s = secure_getenv("MALLOC_FREQ_SEED");
	if (s) {
		if (mf_parse_uint(s, 0, ULONG_MAX, &v) == 0) {
			mf_config.seed = v;
			mf_config.have_seed = 1;
		} else {
			mf_log("MALLOC_FREQ_SEED=\"%s\" is not a whole number; sampling is seeded "
			       "from the clock",
			       s);
		}
	}
}
