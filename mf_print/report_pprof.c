/* --pprof FILE: the model as pprof's profile.proto, gzipped, for go tool pprof and the
 * services that ingest it (Pyroscope, Parca, Grafana). One sample per model sample (a stack as
 * one thread recorded it), one value per metric; with --diff, the base's samples follow with
 * their values negated. Writes only the stream it is given. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "idset.h"
#include "labels.h"
#include "pprof_encode.h"
#include "report.h"

/* profile.proto's field numbers (github.com/google/pprof, proto/profile.proto) */
enum {
	PB_PROFILE_SAMPLE_TYPE = 1,
	PB_PROFILE_SAMPLE = 2,
	PB_PROFILE_MAPPING = 3,
	PB_PROFILE_LOCATION = 4,
	PB_PROFILE_FUNCTION = 5,
	PB_PROFILE_STRING_TABLE = 6,
	PB_PROFILE_TIME_NANOS = 9,
	PB_PROFILE_DURATION_NANOS = 10,
	PB_PROFILE_PERIOD_TYPE = 11,
	PB_PROFILE_PERIOD = 12,
	PB_PROFILE_COMMENT = 13,
	PB_PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	PB_VALUE_TYPE_TYPE = 1,
	PB_VALUE_TYPE_UNIT = 2,
	PB_SAMPLE_LOCATION_ID = 1,
	PB_SAMPLE_VALUE = 2,
	PB_SAMPLE_LABEL = 3,
	PB_LABEL_KEY = 1,
	PB_LABEL_STR = 2,
	PB_LABEL_NUM = 3,
	PB_LABEL_NUM_UNIT = 4,
	PB_MAPPING_ID = 1,
	PB_MAPPING_MEMORY_START = 2,
	PB_MAPPING_MEMORY_LIMIT = 3,
	PB_MAPPING_FILENAME = 5,
	PB_MAPPING_BUILD_ID = 6,
	PB_MAPPING_HAS_FUNCTIONS = 7,
	PB_MAPPING_HAS_FILENAMES = 8,
	PB_MAPPING_HAS_LINE_NUMBERS = 9,
	PB_MAPPING_HAS_INLINE_FRAMES = 10,
	PB_LOCATION_ID = 1,
	PB_LOCATION_MAPPING_ID = 2,
	PB_LOCATION_ADDRESS = 3,
	PB_LOCATION_LINE = 4,
	PB_LINE_FUNCTION_ID = 1,
	PB_LINE_LINE = 2,
	PB_LINE_COLUMN = 3,
	PB_FUNCTION_ID = 1,
	PB_FUNCTION_NAME = 2,
	PB_FUNCTION_SYSTEM_NAME = 3,
	PB_FUNCTION_FILENAME = 4,
};

/* Each metric as a pprof sample type: the names go tool pprof's heap profiles use where one
 * fits, and units it knows (count, bytes, nanoseconds) so that it scales and prints them. */
static const struct {
	const char *type, *unit;
} mf_pprof_types[] = {
    [MF_METRIC_CALLS] = {"alloc_calls", "count"},
    [MF_METRIC_BYTES] = {"alloc_space", "bytes"},
    [MF_METRIC_TIME] = {"cpu", "nanoseconds"},
    [MF_METRIC_TEMPORARY] = {"temporaries", "count"},
    [MF_METRIC_LEAKED_BLOCKS] = {"leaked_objects", "count"},
    [MF_METRIC_LEAKED] = {"leaked_space", "bytes"},
    [MF_METRIC_PEAK_BLOCKS] = {"peak_objects", "count"},
    [MF_METRIC_PEAK] = {"peak_space", "bytes"},
    [MF_METRIC_SHORT] = {"short_lived", "count"},
    [MF_METRIC_MAX_BLOCKS] = {"max_live_objects", "count"},
    [MF_METRIC_MAX_LIVE] = {"max_live_space", "bytes"},
    [MF_METRIC_FREED] = {"freed_objects", "count"},
    [MF_METRIC_LIFETIME] = {"lifetime", "nanoseconds"},
};
_Static_assert(sizeof(mf_pprof_types) / sizeof(mf_pprof_types[0]) == MF_METRICS,
	       "every metric is a sample type");

/* Each module's mappings are placed in an address range of their own (a frame's address is
 * the range's start plus its offset in the module), so that no two mappings overlap. */
#define MF_PPROF_MAPPING_SPAN (1ull << 40)

struct mf_pprof {
	struct mf_pb prof;
	struct mf_pb msg, sub;	/* a sample and its label, a header's value type */
	struct mf_pb loc, line; /* a location and its line */
	struct mf_pb leaf;	/* a function or a mapping */
	char **str;		/* the string table; str[0] is "" */
	size_t nstr, cap_str;
	struct mf_idset str_set;
	uint64_t (*fn)[3]; /* functions: name, system name, file name (string ids) */
	size_t nfn, cap_fn;
	struct mf_idset fn_set;
	uint64_t (*map)[2]; /* mappings: file name and build-id (string ids) */
	size_t nmap, cap_map;
	uint64_t nloc;
	uint64_t *ids; /* a sample's location ids, leaf first */
	size_t cap_ids;
	int held[MF_METRICS]; /* the metrics written, a sample type each (mf_model_metrics) */
	int nheld;
};

static uint64_t mf_pprof_str_rehash(const void *ctx, uint32_t id)
{
	return mf_hash_str(((const struct mf_pprof *)ctx)->str[id]);
}

/* The string table index of s, added if new (0 when out of memory: prof.err says so). */
static uint64_t mf_pprof_str(struct mf_pprof *pp, const char *s)
{
	uint64_t hash = mf_hash_str(s);
	for (size_t at = mf_idset_first(&pp->str_set, hash); pp->str_set.slot[at] != MF_IDSET_EMPTY;
	     at = mf_idset_next(&pp->str_set, at))
		if (!strcmp(pp->str[pp->str_set.slot[at]], s))
			return pp->str_set.slot[at];
	char **v = mf_array_room(pp->str, pp->nstr, &pp->cap_str, sizeof(*v));
	if (v)
		pp->str = v;
	if (!v || mf_idset_room(&pp->str_set, mf_pprof_str_rehash, pp) ||
	    !(pp->str[pp->nstr] = strdup(s))) {
		pp->prof.err = -ENOMEM;
		return 0;
	}
	mf_idset_put(&pp->str_set, hash, (uint32_t)pp->nstr);
	return pp->nstr++;
}

static uint64_t mf_pprof_fn_hash(const uint64_t *k)
{
	return mf_hash_mix(mf_hash_mix(mf_hash_mix(0x3c6ef372fe94f82bull, k[0]), k[1]), k[2]);
}

static uint64_t mf_pprof_fn_rehash(const void *ctx, uint32_t id)
{
	return mf_pprof_fn_hash(((const struct mf_pprof *)ctx)->fn[id]);
}

/* The id of the function of these names, written when new. */
static uint64_t mf_pprof_function(struct mf_pprof *pp, const char *name, const char *system,
				  const char *file)
{
	uint64_t k[3] = {mf_pprof_str(pp, name), mf_pprof_str(pp, system), mf_pprof_str(pp, file)};
	uint64_t hash = mf_pprof_fn_hash(k);
	for (size_t at = mf_idset_first(&pp->fn_set, hash); pp->fn_set.slot[at] != MF_IDSET_EMPTY;
	     at = mf_idset_next(&pp->fn_set, at))
		if (!memcmp(pp->fn[pp->fn_set.slot[at]], k, sizeof(k)))
			return pp->fn_set.slot[at] + 1;
	uint64_t(*v)[3] = mf_array_room(pp->fn, pp->nfn, &pp->cap_fn, sizeof(*v));
	if (v)
		pp->fn = v;
	if (!v || mf_idset_room(&pp->fn_set, mf_pprof_fn_rehash, pp)) {
		pp->prof.err = -ENOMEM;
		return 0;
	}
	memcpy(pp->fn[pp->nfn], k, sizeof(k));
	mf_idset_put(&pp->fn_set, hash, (uint32_t)pp->nfn);
	uint64_t id = ++pp->nfn;
	mf_pb_varint(&pp->leaf, PB_FUNCTION_ID, id);
	mf_pb_varint(&pp->leaf, PB_FUNCTION_NAME, k[0]);
	mf_pb_varint(&pp->leaf, PB_FUNCTION_SYSTEM_NAME, k[1]);
	mf_pb_varint(&pp->leaf, PB_FUNCTION_FILENAME, k[2]);
	mf_pb_message(&pp->prof, PB_PROFILE_FUNCTION, &pp->leaf);
	return id;
}

/* The id of the mapping of a model module (the same file and build-id in the base and the
 * profile are one mapping), written when new. */
static uint64_t mf_pprof_mapping(struct mf_pprof *pp, const struct mf_model_module *mod)
{
	char hex[2 * MF_BUILD_ID_LEN + 1] = "";
	for (uint32_t i = 0; i < mod->build_id_len && i < MF_BUILD_ID_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", mod->build_id[i]);
	uint64_t k[2] = {mf_pprof_str(pp, mod->path), mf_pprof_str(pp, hex)};
	for (size_t i = 0; i < pp->nmap; i++) /* (a profile has tens of modules, not millions) */
		if (!memcmp(pp->map[i], k, sizeof(k)))
			return i + 1;
	uint64_t(*v)[2] = mf_array_room(pp->map, pp->nmap, &pp->cap_map, sizeof(*v));
	if (!v) {
		pp->prof.err = -ENOMEM;
		return 0;
	}
	pp->map = v;
	memcpy(pp->map[pp->nmap], k, sizeof(k));
	uint64_t id = ++pp->nmap;
	mf_pb_varint(&pp->leaf, PB_MAPPING_ID, id);
	mf_pb_varint(&pp->leaf, PB_MAPPING_MEMORY_START, id * MF_PPROF_MAPPING_SPAN);
	mf_pb_varint(&pp->leaf, PB_MAPPING_MEMORY_LIMIT, (id + 1) * MF_PPROF_MAPPING_SPAN);
	mf_pb_varint(&pp->leaf, PB_MAPPING_FILENAME, k[0]);
	mf_pb_varint(&pp->leaf, PB_MAPPING_BUILD_ID, k[1]);
	/* symbolized already: pprof is not to look for the binaries */
	mf_pb_varint(&pp->leaf, PB_MAPPING_HAS_FUNCTIONS, 1);
	mf_pb_varint(&pp->leaf, PB_MAPPING_HAS_FILENAMES, 1);
	mf_pb_varint(&pp->leaf, PB_MAPPING_HAS_LINE_NUMBERS, 1);
	mf_pb_varint(&pp->leaf, PB_MAPPING_HAS_INLINE_FRAMES, 1);
	mf_pb_message(&pp->prof, PB_PROFILE_MAPPING, &pp->leaf);
	return id;
}

/* pprof takes the first mapping for the program's own (its "File:" line): the executable of
 * the first process that names one, if one of the modules is that file. */
static void mf_pprof_main_mapping(struct mf_pprof *pp, const struct mf_model *m)
{
	for (size_t p = 0; p < m->nprocesses; p++) {
		const char *exe = m->processes[p].exe;
		if (!exe || !*exe)
			continue;
		const char *slash = strrchr(exe, '/');
		const char *base = slash ? slash + 1 : exe;
		for (size_t i = 0; i < m->nmodules; i++)
			if (!strcmp(m->modules[i].path, exe) || !strcmp(m->modules[i].base, base)) {
				mf_pprof_mapping(pp, &m->modules[i]);
				return;
			}
		return;
	}
}

/* The frames of the location that starts at frame f (not inlined): f and those inlined into
 * it, which follow it in the frame table. */
static uint32_t mf_pprof_location_frames(const struct mf_model *m, uint32_t f)
{
	uint32_t n = 1;
	while (f + n < m->nframes && m->frames[f + n].inlined_into == f + n - 1)
		n++;
	return n;
}

/* A model's frames as pprof locations: loc[f] for a frame f that starts a location. */
struct mf_pprof_model {
	const struct mf_model *m;
	struct mf_labels l;
	uint64_t *loc; /* by frame; 0: not written yet */
};

/* The location id of frame f (one that is inlined into none), written when new: its lines
 * innermost first, as profile.proto orders them. */
static uint64_t mf_pprof_location(struct mf_pprof *pp, struct mf_pprof_model *pm, uint32_t f)
{
	if (pm->loc[f])
		return pm->loc[f];
	const struct mf_model *m = pm->m;
	const struct mf_frame *fr = &m->frames[f];
	uint64_t mapping =
	    fr->kind == MF_FRAME_CODE ? mf_pprof_mapping(pp, &m->modules[fr->module]) : 0;
	uint64_t address = fr->kind == MF_FRAME_CODE  ? mapping * MF_PPROF_MAPPING_SPAN + fr->offset
			   : fr->kind == MF_FRAME_JIT ? fr->offset
						      : 0;
	uint32_t n = mf_pprof_location_frames(m, f);
	uint64_t id = ++pp->nloc;
	mf_pb_varint(&pp->loc, PB_LOCATION_ID, id);
	if (mapping)
		mf_pb_varint(&pp->loc, PB_LOCATION_MAPPING_ID, mapping);
	mf_pb_varint(&pp->loc, PB_LOCATION_ADDRESS, address);
	for (uint32_t k = n; k-- > 0;) {
		const struct mf_frame *g = &m->frames[f + k];
		const char *name = pm->l.text[pm->l.of_frame[f + k]];
		uint64_t fn = mf_pprof_function(pp, name, g->function ? g->function : name,
						g->file ? g->file : "");
		mf_pb_varint(&pp->line, PB_LINE_FUNCTION_ID, fn);
		if (g->line)
			mf_pb_varint(&pp->line, PB_LINE_LINE, g->line);
		if (g->column)
			mf_pb_varint(&pp->line, PB_LINE_COLUMN, g->column);
		mf_pb_message(&pp->loc, PB_LOCATION_LINE, &pp->line);
	}
	mf_pb_message(&pp->prof, PB_PROFILE_LOCATION, &pp->loc);
	return pm->loc[f] = id;
}

static void mf_pprof_label_str(struct mf_pprof *pp, const char *key, const char *value)
{
	mf_pb_varint(&pp->sub, PB_LABEL_KEY, mf_pprof_str(pp, key));
	mf_pb_varint(&pp->sub, PB_LABEL_STR, mf_pprof_str(pp, value));
	mf_pb_message(&pp->msg, PB_SAMPLE_LABEL, &pp->sub);
}

static void mf_pprof_label_num(struct mf_pprof *pp, const char *key, uint64_t value,
			       const char *unit)
{
	mf_pb_varint(&pp->sub, PB_LABEL_KEY, mf_pprof_str(pp, key));
	mf_pb_varint(&pp->sub, PB_LABEL_NUM, value);
	if (unit)
		mf_pb_varint(&pp->sub, PB_LABEL_NUM_UNIT, mf_pprof_str(pp, unit));
	mf_pb_message(&pp->msg, PB_SAMPLE_LABEL, &pp->sub);
}

/* Every sample of m, its values negated when negate (a --diff base). */
/* A label "tag": the stack's tag scopes (malloc_freq_tag_push), outermost first, joined by
 * '/', for -tagfocus=tag=...; none when it has none. */
static void mf_pprof_label_tag(struct mf_pprof *pp, const struct mf_model *m, const uint32_t *fr,
			       uint32_t depth)
{
	char path[1024];
	size_t len = 0;
	for (uint32_t k = 0; k < depth; k++) {
		const struct mf_frame *f = &m->frames[fr[k]];
		if (f->kind != MF_FRAME_TAG || !f->function)
			continue;
		int w =
		    snprintf(path + len, sizeof(path) - len, "%s%s", len ? "/" : "", f->function);
		if (w < 0 || (size_t)w >= sizeof(path) - len)
			break; /* (16 tags of 63 bytes fit) */
		len += (size_t)w;
	}
	if (len)
		mf_pprof_label_str(pp, "tag", path);
}

static int mf_pprof_samples(struct mf_pprof *pp, const struct mf_model *m, int negate,
			    int full_names)
{
	struct mf_pprof_model pm = {.m = m};
	int r = mf_labels_build(&pm.l, m, MF_LABEL_FUNCTION, full_names, NULL);
	if (!r && !(pm.loc = calloc(m->nframes ? m->nframes : 1, sizeof(*pm.loc))))
		r = -ENOMEM;
	for (size_t s = 0; !r && s < m->nsamples; s++) {
		const struct mf_stack *st = &m->stacks[m->samples[s].stack];
		const uint32_t *fr = mf_model_stack_frames(m, m->samples[s].stack);
		uint64_t *ids = mf_array_room_n(pp->ids, 0, st->depth, &pp->cap_ids, sizeof(*ids));
		if (!ids) {
			r = -ENOMEM;
			break;
		}
		pp->ids = ids;
		size_t n = 0;
		for (uint32_t k = st->depth; k-- > 0;) /* leaf first */
			if (m->frames[fr[k]].inlined_into == MF_NONE)
				ids[n++] = mf_pprof_location(pp, &pm, fr[k]);
		uint64_t values[MF_METRICS];
		for (int k = 0; k < pp->nheld; k++) {
			uint64_t v = m->values[pp->held[k]][s];
			int64_t x = v > INT64_MAX ? INT64_MAX : (int64_t)v;
			values[k] = (uint64_t)(negate ? -x : x);
		}
		mf_pb_packed(&pp->msg, PB_SAMPLE_LOCATION_ID, ids, n);
		mf_pb_packed(&pp->msg, PB_SAMPLE_VALUE, values, (size_t)pp->nheld);
		const struct mf_thread *t = &m->threads[m->samples[s].thread];
		const struct mf_process *p = &m->processes[t->process];
		mf_pprof_label_num(pp, "thread_id", t->tid, NULL);
		mf_pprof_label_str(pp, "thread_name", t->name);
		mf_pprof_label_num(pp, "pid", p->pid, NULL);
		mf_pprof_label_str(pp, "program", p->name);
		if (t->sample_rate > 1)
			mf_pprof_label_num(pp, "sample_rate", t->sample_rate, "count");
		mf_pprof_label_tag(pp, m, fr, st->depth);
		if (negate)
			mf_pprof_label_str(pp, "diff", "base");
		mf_pb_message(&pp->prof, PB_PROFILE_SAMPLE, &pp->msg);
		r = pp->prof.err;
	}
	mf_labels_free(&pm.l);
	free(pm.loc);
	return r;
}

static void mf_pprof_comment(struct mf_pprof *pp, const char *text)
{
	mf_pb_varint(&pp->prof, PB_PROFILE_COMMENT, mf_pprof_str(pp, text));
}

/* The header: sample types, the period, the time span and the comments. */
static void mf_pprof_header(struct mf_pprof *pp, const struct mf_model *m,
			    const struct mf_report_options *o)
{
	pp->nheld = mf_model_metrics(m, o->base, pp->held);
	for (int k = 0; k < pp->nheld; k++) {
		mf_pb_varint(&pp->msg, PB_VALUE_TYPE_TYPE,
			     mf_pprof_str(pp, mf_pprof_types[pp->held[k]].type));
		mf_pb_varint(&pp->msg, PB_VALUE_TYPE_UNIT,
			     mf_pprof_str(pp, mf_pprof_types[pp->held[k]].unit));
		mf_pb_message(&pp->prof, PB_PROFILE_SAMPLE_TYPE, &pp->msg);
	}
	mf_pb_varint(&pp->prof, PB_PROFILE_DEFAULT_SAMPLE_TYPE,
		     mf_pprof_str(pp, mf_pprof_types[o->metric].type));
	uint64_t rate = mf_model_rate(m), start, end;
	mf_model_span(m, &start, &end);
	mf_pb_varint(&pp->msg, PB_VALUE_TYPE_TYPE, mf_pprof_str(pp, "alloc_calls"));
	mf_pb_varint(&pp->msg, PB_VALUE_TYPE_UNIT, mf_pprof_str(pp, "count"));
	mf_pb_message(&pp->prof, PB_PROFILE_PERIOD_TYPE, &pp->msg);
	mf_pb_varint(&pp->prof, PB_PROFILE_PERIOD, rate);
	if (start) {
		mf_pb_varint(&pp->prof, PB_PROFILE_TIME_NANOS, start);
		if (end > start)
			mf_pb_varint(&pp->prof, PB_PROFILE_DURATION_NANOS, end - start);
	}
	mf_pprof_comment(pp, "malloc_freq " PACKAGE_VERSION
			     ": calls to the allocation functions by call stack");
	if (m->estimated || (o->base && o->base->estimated))
		mf_pprof_comment(pp, "estimates: sampled threads' counts are scaled by their "
				     "sampling rate (label sample_rate)");
	char text[4096];
	if (o->window && o->window[0]) {
		snprintf(text, sizeof(text), "counts %s", o->window);
		mf_pprof_comment(pp, text);
	}
	if (o->base) {
		snprintf(text, sizeof(text),
			 "diff: the samples labelled diff=base are %s's, negated", o->base_name);
		mf_pprof_comment(pp, text);
	}
}

int mf_report_pprof(FILE *out, const struct mf_model *m, const struct mf_report_options *o)
{
	struct mf_pprof pp = {0};
	int r = mf_idset_init(&pp.str_set, 1024) || mf_idset_init(&pp.fn_set, 1024) ? -ENOMEM : 0;
	if (!r && mf_pprof_str(&pp, "") != 0)
		r = -ENOMEM;
	if (!r) {
		mf_pprof_header(&pp, m, o);
		mf_pprof_main_mapping(&pp, m);
		r = pp.prof.err ? pp.prof.err : mf_pprof_samples(&pp, m, 0, o->full_names);
	}
	if (!r && o->base)
		r = mf_pprof_samples(&pp, o->base, 1, o->full_names);
	for (size_t i = 0; !r && i < pp.nstr; i++)
		mf_pb_bytes(&pp.prof, PB_PROFILE_STRING_TABLE, pp.str[i], strlen(pp.str[i]));
	if (!r)
		r = mf_pb_write_gzip(&pp.prof, out);
	if (!r && ferror(out))
		r = -EIO;
	for (size_t i = 0; i < pp.nstr; i++)
		free(pp.str[i]);
	free(pp.str);
	free(pp.str_set.slot);
	free(pp.fn);
	free(pp.fn_set.slot);
	free(pp.map);
	free(pp.ids);
	mf_pb_free(&pp.prof);
	mf_pb_free(&pp.msg);
	mf_pb_free(&pp.sub);
	mf_pb_free(&pp.loc);
	mf_pb_free(&pp.line);
	mf_pb_free(&pp.leaf);
	return r;
}
