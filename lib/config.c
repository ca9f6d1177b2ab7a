/* Settings of libmalloc_freq, read once at start from the environment (secure_getenv) and
 * validated: an unusable value is named on stderr and its default used. No malloc. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mf_internal.h"
#include "parse.h"

#define MF_SAMPLE_MAX 1000000000ul

struct mf_config mf_config = {.depth = MF_DEPTH_DEFAULT,
			      .sample = 1,
			      .file_mode = 0600,
			      .dir_mode = 0700,
			      .timeline_ms = 1000};

/* ln(1 + x) for |x| <= 1/2, to within a few units in the last place, as 2 atanh(x / (2 + x)):
 * its series gains at least a factor 9 per term. (libm would be one more library for every
 * process to load, for this and the sampling draw's logarithms.) */
static double mf_ln1p(double x)
{
	double s = x / (2 + x), s2 = s * s, term = s, sum = s;
	for (int k = 3; k < 80; k += 2) {
		term *= s2;
		double add = term / k;
		if (add == 0 || (add < 0 ? -add : add) < 0x1p-60 * (sum < 0 ? -sum : sum))
			break;
		sum += add;
	}
	return 2 * sum;
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

static void mf_config_control(void)
{
	const char *s = secure_getenv("MALLOC_FREQ_START");
	if (s) {
		if (!strcmp(s, "off"))
			mf_config.start_off = 1;
		else if (strcmp(s, "on"))
			mf_log("MALLOC_FREQ_START=\"%s\" is not one of on, off; using on", s);
	}
	static const char *const vars[] = {"MALLOC_FREQ_SNAPSHOT_SIGNAL",
					   "MALLOC_FREQ_TOGGLE_SIGNAL"};
	int *sigs[] = {&mf_config.snapshot_signal, &mf_config.toggle_signal};
	for (int i = 0; i < 2; i++) {
		if (!(s = secure_getenv(vars[i])) || !strcmp(s, "off"))
			continue;
		if (!(*sigs[i] = mf_parse_signal(s)))
			mf_log("%s=\"%s\" is not a signal a handler may take (USR1, USR2, "
			       "RTMIN+N, a number; not KILL, STOP, nor a fault's: SEGV, BUS, FPE, "
			       "ILL, TRAP, SYS; nor 32 or 33, glibc's own) or off; using off",
			       vars[i], s);
	}
	if (mf_config.snapshot_signal && mf_config.snapshot_signal == mf_config.toggle_signal) {
		mf_log("MALLOC_FREQ_SNAPSHOT_SIGNAL and MALLOC_FREQ_TOGGLE_SIGNAL are the same "
		       "signal; the toggle signal is off");
		mf_config.toggle_signal = 0;
	}
	s = secure_getenv("MALLOC_FREQ_SNAPSHOT_INTERVAL");
	if (s && strcmp(s, "off") && !(mf_config.snapshot_interval_ms = mf_parse_ms(s)))
		mf_log("MALLOC_FREQ_SNAPSHOT_INTERVAL=\"%s\" is not a number of seconds from 0.001 "
		       "to 86400 (three decimals at most) or off; using off",
		       s);
	s = secure_getenv("MALLOC_FREQ_TIMELINE");
	if (s && !strcmp(s, "off"))
		mf_config.timeline_ms = 0;
	else if (s && !(mf_config.timeline_ms = mf_parse_ms(s))) {
		mf_log("MALLOC_FREQ_TIMELINE=\"%s\" is not a number of seconds from 0.001 to 86400 "
		       "(three decimals at most) or off; using 1",
		       s);
		mf_config.timeline_ms = 1000;
	}
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
	mf_config.unwind = MF_ARCH_UNWIND_DEFAULT;
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
			       "using %s",
			       s, mf_config.unwind == MF_UNWIND_CACHED ? "cached" : "libunwind");
	}
	s = secure_getenv("MALLOC_FREQ_LIFETIMES");
	if (s && strcmp(s, "0") && strcmp(s, "1"))
		mf_log("MALLOC_FREQ_LIFETIMES=\"%s\" is neither 0 nor 1; lifetimes are off", s);
	else
		mf_config.lifetimes = s && !strcmp(s, "1");
	s = secure_getenv("MALLOC_FREQ_WEIGHT");
	if (s && !strcmp(s, "time"))
		mf_config.weight_time = 1;
	else if (s && strcmp(s, "calls"))
		mf_log("MALLOC_FREQ_WEIGHT=\"%s\" is not one of calls, time; using calls", s);
	mf_config.hot = mf_config.sample == 1 && mf_config.unwind == MF_UNWIND_CACHED &&
			!mf_config.weight_time; /* (time is read on the slow path) */
	mf_config_control();
	s = secure_getenv("MALLOC_FREQ_MODE");
	int mode = s ? mf_parse_mode(s) : 0600;
	if (mode < 0)
		mf_log(
		    "MALLOC_FREQ_MODE=\"%s\" is not a mode that lets the owner read and write and "
		    "others at most read (600, 640, 644); using 600",
		    s);
	mf_config.file_mode = mode < 0 ? 0600 : (unsigned)mode;
	mf_config.dir_mode = mf_dir_mode(mf_config.file_mode);
	s = secure_getenv("MALLOC_FREQ_FIND_OBJECT");
	if (s && !strcmp(s, "table"))
		mf_config.find_object_table = 1;
	else if (s && strcmp(s, "loader"))
		mf_log("MALLOC_FREQ_FIND_OBJECT=\"%s\" is not one of loader, table; using loader",
		       s);
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
