/* Building the merged model (see model.h): modules interned by path and build-id, each
 * distinct (module, address) symbolized once for all threads and processes into frames, stacks
 * interned as arrays of frame ids, counts added to one sample per (stack, thread). Memory grows
 * with distinct addresses and stacks, not with threads times stacks. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "idset.h"
#include "model.h"
#include "symbolize.h"

const char *const mf_entry_names[MF_ENTRY_COUNT] = MF_ENTRY_NAMES;

const struct mf_metric_info mf_metric_info[MF_METRICS] = {
    [MF_METRIC_CALLS] = {"calls", "calls"},
    [MF_METRIC_BYTES] = {"bytes", "bytes"},
    [MF_METRIC_TIME] = {"time", "CPU time"},
    [MF_METRIC_TEMPORARY] = {"temporary", "temporaries"},
    [MF_METRIC_LEAKED_BLOCKS] = {"leaked-blocks", "leaked blocks"},
    [MF_METRIC_LEAKED] = {"leaked", "leaked bytes"},
    [MF_METRIC_PEAK_BLOCKS] = {"peak-blocks", "blocks live at the peak"},
    [MF_METRIC_PEAK] = {"peak", "bytes live at the peak"},
    [MF_METRIC_SHORT] = {"short", "short-lived blocks"},
    [MF_METRIC_MAX_BLOCKS] = {"max-live-blocks", "max live blocks"},
    [MF_METRIC_MAX_LIVE] = {"max-live", "max live bytes"},
    [MF_METRIC_FREED] = {"freed", "blocks freed at a known time"},
    [MF_METRIC_LIFETIME] = {"lifetime", "nanoseconds lived"},
};

/* A distinct address of a module (or a special frame): its frames are
 * frames[first .. first + count), outermost first. */
struct mf_location {
	uint64_t offset;
	uint32_t module; /* model module; MF_NONE: code no module maps */
	uint32_t first, count;
	bool interrupted; /* offset is the instruction a signal interrupted, not a return address */
	bool sigreturn;	  /* offset is a signal return, where a handler's frame returns to */
};

struct mf_model_index {
	struct mf_location *locations;
	size_t nlocations, cap_locations;
	struct mf_idset location_set, stack_set, module_set;
	uint32_t truncated_location;
	uint32_t *scratch; /* a stack's locations while it is walked */
	size_t cap_scratch;
	char **tag_names; /* the tags met, by name (any process): each a frame and a location */
	uint32_t *tag_location;
	size_t ntags, cap_tags;
};

/* ---- modules -------------------------------------------------------------------------------- */

static uint64_t mf_module_hash(const char *path, const uint8_t *id, uint32_t len)
{
	uint64_t h = mf_hash_str(path);
	for (uint32_t i = 0; i < len; i++)
		h = mf_hash_mix(h, id[i] | 0x100u);
	return h;
}

static uint64_t mf_module_rehash(const void *ctx, uint32_t id)
{
	const struct mf_model_module *mod = &((const struct mf_model *)ctx)->modules[id];
	return mf_module_hash(mod->path, mod->build_id, mod->build_id_len);
}

static int mf_model_module(struct mf_model *m, const struct mf_module *in, uint32_t *out)
{
	struct mf_idset *set = &m->idx->module_set;
	uint32_t len = in->build_id_len <= MF_BUILD_ID_LEN ? in->build_id_len : 0;
	uint64_t hash = mf_module_hash(in->path, in->build_id, len);
	for (size_t at = mf_idset_first(set, hash); set->slot[at] != MF_NONE;
	     at = mf_idset_next(set, at)) {
		const struct mf_model_module *mod = &m->modules[set->slot[at]];
		if (mod->build_id_len == len && !memcmp(mod->build_id, in->build_id, len) &&
		    !strcmp(mod->path, in->path)) {
			*out = set->slot[at];
			return 0;
		}
	}
	char *path = strdup(in->path);
	struct mf_model_module *mod =
	    path ? mf_array_push(m->modules, m->nmodules, m->cap_modules) : NULL;
	if (!mod) {
		free(path);
		return -ENOMEM;
	}
	mod->path = path;
	const char *slash = strrchr(path, '/');
	mod->base = mf_sym_is_vdso(path) ? "[vdso]"
		    : path[0]		 ? (slash ? slash + 1 : path)
					 : "[unknown]";
	mod->build_id_len = len;
	memcpy(mod->build_id, in->build_id, len);
	mod->span = in->end > in->start ? in->end - in->start : 0;
	*out = (uint32_t)m->nmodules - 1;
	if (mf_idset_room(set, mf_module_rehash, m))
		return -ENOMEM;
	mf_idset_put(set, hash, *out);
	return 0;
}

/* ---- frames and locations ----------------------------------------------------------------- */

static int mf_frame_new(struct mf_model *m, const struct mf_frame *f, uint32_t *id)
{
	struct mf_frame *v = mf_array_push(m->frames, m->nframes, m->cap_frames);
	if (!v)
		return -ENOMEM;
	*v = *f;
	*id = (uint32_t)m->nframes - 1;
	return 0;
}

static uint64_t mf_location_hash(uint32_t module, uint64_t offset, bool interrupted)
{
	return mf_hash_mix(mf_hash_mix(0x2545f4914f6cdd1dull ^ interrupted, module), offset);
}

static uint64_t mf_location_rehash(const void *ctx, uint32_t id)
{
	const struct mf_location *l = &((const struct mf_model_index *)ctx)->locations[id];
	return mf_location_hash(l->module, l->offset, l->interrupted);
}

static int mf_location_new(struct mf_model *m, uint32_t module, uint64_t offset, uint32_t first,
			   uint32_t count, bool interrupted, bool sigreturn, uint32_t *id)
{
	struct mf_model_index *x = m->idx;
	struct mf_location *v = mf_array_push(x->locations, x->nlocations, x->cap_locations);
	if (!v)
		return -ENOMEM;
	*v = (struct mf_location){offset, module, first, count, interrupted, sigreturn};
	*id = (uint32_t)x->nlocations - 1;
	return 0;
}

/* The frames of a code address: symbolized now, once for the whole model. A return address
 * is looked up at its call; an interrupted instruction or a signal return (*sigreturn, found
 * here) at itself. */
static int mf_location_frames(struct mf_model *m, uint32_t module, uint64_t offset,
			      bool interrupted, uint32_t *first, uint32_t *count, bool *sigreturn)
{
	struct mf_model_module *mod = &m->modules[module];
	const struct mf_sym_frame *sf;
	if (!mod->sym && !(mod->sym = mf_sym_module_get(m->sym, mod->path)))
		return -ENOMEM; /* (opened when its first frame is met) */
	if (!mod->build_id_len) /* (nothing else tells a file changed since the run) */
		mf_sym_module_expect(m->sym, mod->sym, mod->span, mod->unended ? 0 : mod->ended_ns);
	*sigreturn = !interrupted && mf_sym_is_sigreturn(m->sym, mod->sym, mod->build_id,
							 mod->build_id_len, offset);
	int n = mf_sym_lookup_in(m->sym, mod->sym, mod->build_id, mod->build_id_len, offset,
				 !interrupted && !*sigreturn, &sf);
	*first = (uint32_t)m->nframes;
	*count = (uint32_t)n;
	mod->frames += (uint32_t)n;
	for (int k = 0; k < n; k++) {
		const struct mf_sym_frame *s = &sf[n - 1 - k]; /* outermost first */
		struct mf_frame f = {
		    .offset = offset,
		    .module = module,
		    .inlined_into = k ? *first + (uint32_t)k - 1 : MF_NONE,
		    .function = s->named ? s->function : NULL, /* (labels name it by offset) */
		    .file = s->file,
		    .line = s->line > 0 ? (uint32_t)s->line : 0,
		    .column = s->column > 0 ? (uint32_t)s->column : 0,
		    .kind = MF_FRAME_CODE,
		    .lang = (uint8_t)s->lang,
		};
		uint32_t id;
		if (mf_frame_new(m, &f, &id))
			return -ENOMEM;
	}
	return 0;
}

/* The location of a node's frame: module is a model module or MF_NONE (no module maps it). */
static int mf_location(struct mf_model *m, uint32_t module, uint64_t offset, bool interrupted,
		       uint32_t *id)
{
	struct mf_model_index *x = m->idx;
	struct mf_idset *set = &x->location_set;
	uint64_t hash = mf_location_hash(module, offset, interrupted);
	bool sigreturn = false;
	for (size_t at = mf_idset_first(set, hash); set->slot[at] != MF_NONE;
	     at = mf_idset_next(set, at)) {
		const struct mf_location *l = &x->locations[set->slot[at]];
		if (l->module == module && l->offset == offset && l->interrupted == interrupted) {
			*id = set->slot[at];
			return 0;
		}
	}
	uint32_t first, count = 1;
	int r;
	if (module == MF_NONE) {
		struct mf_frame f = {.offset = offset,
				     .module = MF_NONE,
				     .inlined_into = MF_NONE,
				     .kind = MF_FRAME_JIT};
		r = mf_frame_new(m, &f, &first);
	} else {
		r = mf_location_frames(m, module, offset, interrupted, &first, &count, &sigreturn);
	}
	if (r ||
	    (r = mf_location_new(m, module, offset, first, count, interrupted, sigreturn, id)) ||
	    (r = mf_idset_room(set, mf_location_rehash, x)))
		return r;
	mf_idset_put(set, hash, *id);
	return 0;
}

/* ---- stacks and samples ------------------------------------------------------------------- */

static uint32_t mf_stack_hash(const uint32_t *frames, uint32_t depth)
{
	uint64_t h = 0x6a09e667f3bcc908ull ^ depth;
	for (uint32_t i = 0; i < depth; i++)
		h = mf_hash_mix(h, frames[i]);
	return (uint32_t)(h ^ (h >> 32));
}

static uint64_t mf_stack_rehash(const void *ctx, uint32_t id)
{
	return ((const struct mf_model *)ctx)->stacks[id].hash;
}

/* Interns the stack whose frames were just appended to stack_frames (depth of them, from
 * first): an equal stack keeps its frames and these are dropped. */
static int mf_stack_intern(struct mf_model *m, uint64_t first, uint32_t depth, uint32_t entry,
			   uint32_t *id)
{
	struct mf_idset *set = &m->idx->stack_set;
	const uint32_t *frames = m->stack_frames + first;
	uint32_t hash = mf_stack_hash(frames, depth);
	for (size_t at = mf_idset_first(set, hash); set->slot[at] != MF_NONE;
	     at = mf_idset_next(set, at)) {
		const struct mf_stack *s = &m->stacks[set->slot[at]];
		if (s->hash == hash && s->depth == depth &&
		    !memcmp(m->stack_frames + s->first, frames, depth * sizeof(*frames))) {
			m->nstack_frames = first;
			*id = set->slot[at];
			return 0;
		}
	}
	struct mf_stack *v = mf_array_push(m->stacks, m->nstacks, m->cap_stacks);
	if (!v)
		return -ENOMEM;
	*v = (struct mf_stack){first, depth, entry, hash, MF_NONE};
	if (depth > m->max_depth)
		m->max_depth = depth;
	*id = (uint32_t)m->nstacks - 1;
	if (mf_idset_room(set, mf_stack_rehash, m))
		return -ENOMEM;
	mf_idset_put(set, hash, *id);
	return 0;
}

/* The sample of (stack, thread), made (with zero counts) if new, in *at. Only the columns some
 * thread gave a value have room; the others are made when one does (mf_sample_add), or
 * share m->zeros (mf_model_finish). 0 or -ENOMEM. */
static int mf_sample_at(struct mf_model *m, uint32_t stack, uint32_t thread, uint32_t *out)
{
	struct mf_stack *s = &m->stacks[stack];
	uint32_t at = s->last_sample;
	if (at == MF_NONE || m->samples[at].thread != thread) {
		size_t cap = m->cap_samples;
		struct mf_sample *v = mf_array_room(m->samples, m->nsamples, &cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->samples = v;
		if (cap != m->cap_samples) {
			for (int k = 0; k < MF_METRICS; k++) {
				uint64_t *c =
				    m->values[k] ? realloc(m->values[k], cap * sizeof(*c)) : NULL;
				if (m->values[k] && !c)
					return -ENOMEM;
				m->values[k] = c;
			}
			m->cap_samples = cap;
		}
		at = (uint32_t)m->nsamples++;
		m->samples[at] = (struct mf_sample){stack, thread};
		for (int k = 0; k < MF_METRICS; k++)
			if (m->values[k])
				m->values[k][at] = 0;
		s->last_sample = at;
	}
	*out = at;
	return 0;
}

static int mf_sample_add(struct mf_model *m, uint32_t at, const uint64_t value[MF_METRICS])
{
	for (int k = 0; k < MF_METRICS; k++) {
		if (!value[k])
			continue;
		if (!m->values[k] && !(m->values[k] = calloc(m->cap_samples, sizeof(uint64_t))))
			return -ENOMEM;
		m->values[k][at] = mf_sat_add(m->values[k][at], value[k], &m->saturated[k]);
	}
	return 0;
}

/* ---- building ------------------------------------------------------------------------------ */

int mf_model_init(struct mf_model *m, struct mf_symbolizer *sym)
{
	memset(m, 0, sizeof(*m));
	m->sym = sym;
	m->idx = calloc(1, sizeof(*m->idx));
	struct mf_model_index *x = m->idx;
	if (!x || mf_idset_init(&x->location_set, 1024) || mf_idset_init(&x->stack_set, 1024) ||
	    mf_idset_init(&x->module_set, 64))
		return -ENOMEM;
	for (uint32_t e = 0; e < MF_ENTRY_COUNT; e++) {
		struct mf_frame f = {.offset = e,
				     .module = MF_NONE,
				     .inlined_into = MF_NONE,
				     .kind = MF_FRAME_ENTRY};
		if (mf_frame_new(m, &f, &m->entry_frame[e]))
			return -ENOMEM;
	}
	struct mf_frame t = {
	    .module = MF_NONE, .inlined_into = MF_NONE, .kind = MF_FRAME_TRUNCATED};
	if (mf_frame_new(m, &t, &m->truncated_frame) ||
	    mf_location_new(m, MF_NONE, 0, m->truncated_frame, 1, false, false,
			    &x->truncated_location))
		return -ENOMEM;
	return 0;
}

int mf_model_add_process(struct mf_model *m, const struct mf_process *info, uint32_t *id)
{
	struct mf_process *p = mf_array_push(m->processes, m->nprocesses, m->cap_processes);
	if (!p)
		return -ENOMEM;
	*p = *info;
	p->threads = 0; /* (counted as they are added) */
	p->module_of = NULL;
	p->nmodules = 0;
	p->exec_from = p->exec_to = MF_NONE;
	p->dir = strdup(info->dir ? info->dir : "");
	p->name = strdup(info->name ? info->name : "");
	p->exe = strdup(info->exe ? info->exe : "");
	p->cmdline = strdup(info->cmdline ? info->cmdline : "");
	p->exec_from_dir = strdup(info->exec_from_dir ? info->exec_from_dir : "");
	p->tags = NULL;
	if (info->ntags && (p->tags = malloc((size_t)info->ntags * MF_TAG_NAME_LEN)))
		memcpy((char *)p->tags, info->tags, (size_t)info->ntags * MF_TAG_NAME_LEN);
	p->ntags = p->tags ? info->ntags : 0;
	size_t snaps = (size_t)info->nsnaps * sizeof(*p->snaps);
	p->snaps = NULL;
	if (snaps && (p->snaps = malloc(snaps)))
		memcpy(p->snaps, info->snaps, snaps);
	p->nsnaps = p->snaps ? info->nsnaps : 0;
	*id = (uint32_t)m->nprocesses - 1;
	return p->dir && p->name && p->exe && p->cmdline && p->exec_from_dir &&
		       (p->tags || !info->ntags) && (p->snaps || !snaps)
		   ? 0
		   : -ENOMEM;
}

static const char *mf_basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Links each image to the one it replaced by exec (exec_from_dir, same pid), marking that
 * one's end MF_END_EXEC. */
static void mf_model_link_execs(struct mf_model *m)
{
	for (size_t i = 0; i < m->nprocesses; i++) {
		struct mf_process *p = &m->processes[i];
		if (!p->exec_from_dir[0])
			continue;
		for (size_t k = 0; k < m->nprocesses; k++) {
			struct mf_process *q = &m->processes[k];
			if (k == i || q->pid != p->pid ||
			    strcmp(mf_basename_of(q->dir), p->exec_from_dir))
				continue;
			p->exec_from = (uint32_t)k;
			q->exec_to = (uint32_t)i;
			if (q->end == MF_END_RUNNING || q->end == MF_END_UNRECORDED ||
			    q->end == MF_END_UNKNOWN)
				q->end = MF_END_EXEC;
			break;
		}
	}
}

int mf_model_finish(struct mf_model *m)
{
	mf_model_link_execs(m);
	for (int k = 0; k < MF_METRICS; k++) {
		if (m->values[k])
			continue;
		/* (calloc's large blocks are fresh pages: no memory until a report reads them) */
		if (!m->zeros &&
		    !(m->zeros = calloc(m->nsamples ? m->nsamples : 1, sizeof(uint64_t))))
			return -ENOMEM;
		m->values[k] = m->zeros;
	}
	return 0;
}

int mf_model_add_modules(struct mf_model *m, uint32_t process, const struct mf_modmap *map)
{
	struct mf_process *p = &m->processes[process];
	if (map->count <= p->nmodules)
		return 0;
	uint32_t *v = realloc(p->module_of, map->count * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->module_of = v;
	for (; p->nmodules < map->count; p->nmodules++) {
		if (mf_model_module(m, &map->mods[p->nmodules], &p->module_of[p->nmodules]))
			return -ENOMEM;
		struct mf_model_module *mod = &m->modules[p->module_of[p->nmodules]];
		mod->unended |= !p->end_ns;
		if (p->end_ns > mod->ended_ns)
			mod->ended_ns = p->end_ns;
	}
	return 0;
}

static int mf_thread_new(struct mf_model *m, uint32_t process, const struct mf_profile *p,
			 uint32_t *id)
{
	struct mf_thread *t = mf_array_push(m->threads, m->nthreads, m->cap_threads);
	if (!t || !(t->path = strdup(p->path ? p->path : "")))
		return -ENOMEM;
	t->process = process;
	t->tid = p->header.tid;
	memcpy(t->name, p->header.thread_name, sizeof(t->name));
	t->name[sizeof(t->name) - 1] = 0;
	t->sample_rate = p->header.sample_rate;
	t->seen = p->header.calls_total;
	t->lost = p->header.calls_lost;
	t->nested = p->header.calls_nested;
	t->off = p->header.calls_off; /* (0 before version 4: reserved) */
	t->complete = p->complete;
	t->start_ns = p->header.start_ns;
	t->timeline_from_ns = p->timeline_from_ns;
	t->end_ns = p->header.end_ns;
	t->timeline = p->header.timeline_records != 0;
	t->by_entry = p->header.version >= 11;
	m->timeline_old += p->header.version < 9;
	t->interval_ns = p->header.timeline_interval_ns;
	t->checked_ns = p->header.timeline_checked_ns;
	t->checked_calls = p->header.timeline_checked_calls;
	t->checked_live = p->header.timeline_checked_live;
	if (p->timeline_count) {
		size_t size = p->timeline_count * sizeof(*t->records);
		if (!(t->records = malloc(size)))
			return -ENOMEM;
		memcpy(t->records, p->timeline, size);
		t->nrecords = p->timeline_count;
	}
	m->estimated |= t->sample_rate > 1;
	if (t->sample_rate > m->processes[process].sample_rate) /* (one rate per process) */
		m->processes[process].sample_rate = t->sample_rate;
	m->weighted |= p->header.weight != 0;
	m->processes[process].threads++;
	*id = (uint32_t)m->nthreads - 1;
	return 0;
}

/* The location of a tag node of process proc: one frame per tag name, whatever the process
 * (a name the process's `tags` file lacks is "#<index>"). */
static int mf_tag_location(struct mf_model *m, const struct mf_process *proc, uint64_t index,
			   uint32_t *loc)
{
	struct mf_model_index *x = m->idx;
	char name[MF_TAG_NAME_LEN + 24];
	if (index < proc->ntags)
		snprintf(name, sizeof(name), "%.*s", MF_TAG_NAME_LEN - 1,
			 proc->tags + index * MF_TAG_NAME_LEN);
	else
		snprintf(name, sizeof(name), "#%" PRIu64, index);
	for (size_t i = 0; i < x->ntags; i++)
		if (!strcmp(x->tag_names[i], name)) {
			*loc = x->tag_location[i];
			return 0;
		}
	char **names = mf_array_room(x->tag_names, x->ntags, &x->cap_tags, sizeof(*names));
	if (!names)
		return -ENOMEM;
	x->tag_names = names;
	size_t cap = x->cap_tags;
	uint32_t *locs = realloc(x->tag_location, cap * sizeof(*locs));
	if (!locs || !(names[x->ntags] = strdup(name)))
		return -ENOMEM;
	x->tag_location = locs;
	struct mf_frame f = {.function = names[x->ntags],
			     .module = MF_NONE,
			     .inlined_into = MF_NONE,
			     .kind = MF_FRAME_TAG};
	uint32_t frame;
	int r = mf_frame_new(m, &f, &frame);
	if (!r)
		r = mf_location_new(m, MF_NONE, frame, frame, 1, false, false, &locs[x->ntags]);
	if (r) {
		free(names[x->ntags]);
		return r;
	}
	*loc = locs[x->ntags++];
	return 0;
}

/* A leaf of a thread's trie that counted calls. */
struct mf_leaf_calls {
	uint64_t calls, bytes, time;
	uint32_t parent, entry;
	uint32_t node;	 /* its index: its record follows it (format 4) */
	uint32_t sample; /* the model's sample of its counts */
};

/* A thread's nodes are read in passes, each from first to last: a pass drops the pages of its
 * file's mapping behind it (mf_profile_release_behind), so a large file is not held in memory
 * while the model grows. */

/* The stack of a leaf under node parent: its frames appended to stack_frames, outermost
 * first, the entry last, and interned. up and loc give each node's parent and location. */
static int mf_leaf_stack(struct mf_model *m, const uint32_t *up, const uint32_t *loc,
			 const struct mf_leaf_calls *leaf, uint32_t *id)
{
	struct mf_model_index *x = m->idx;
	size_t nloc = 0, nframes = 1;
	for (uint32_t j = leaf->parent; j; j = up[j]) {
		uint32_t *s = mf_array_room(x->scratch, nloc, &x->cap_scratch, sizeof(*s));
		if (!s)
			return -ENOMEM;
		x->scratch = s;
		x->scratch[nloc++] = loc[j];
		nframes += x->locations[loc[j]].count;
	}
	uint64_t first = m->nstack_frames;
	uint32_t *v =
	    mf_array_room_n(m->stack_frames, first, nframes, &m->cap_stack_frames, sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->stack_frames = v;
	uint32_t *out = m->stack_frames + first;
	for (size_t k = nloc; k-- > 0;) {
		const struct mf_location *l = &x->locations[x->scratch[k]];
		for (uint32_t f = 0; f < l->count; f++)
			*out++ = l->first + f;
	}
	*out = m->entry_frame[leaf->entry];
	m->nstack_frames = first + nframes;
	return mf_stack_intern(m, first, (uint32_t)nframes, leaf->entry, id);
}

/* The location of every node but the leaves (up and loc, by node), and the leaves that
 * counted calls. The profile's nodes are not read again. */
static int mf_thread_nodes(struct mf_model *m, const struct mf_process *proc, struct mf_profile *p,
			   uint32_t *up, uint32_t *loc, struct mf_leaf_calls **leaves,
			   size_t *nleaves)
{
	size_t cap = 0;
	int r = 0;
	for (uint64_t i = 1, after = 0, mark = 0; !r && i < p->node_count; i += 1 + after) {
		mf_profile_release_behind(p, &mark, i);
		const struct mf_node *node = &p->nodes[i];
		up[i] = node->parent;
		loc[i] = MF_NONE;
		after = mf_profile_slots_after(p, node);
		if (node->module == MF_MODULE_ENTRY) {
			struct mf_leaf_calls *l =
			    node->calls ? mf_array_push(*leaves, *nleaves, cap) : NULL;
			if (node->calls && !l)
				r = -ENOMEM;
			else if (l)
				*l = (struct mf_leaf_calls){.calls = node->calls,
							    .bytes = node->bytes,
							    .parent = node->parent,
							    .entry = (uint32_t)node->rel_pc,
							    .node = (uint32_t)i};
			if (l) /* (a leaf's own location is never read: its time node finds it) */
				loc[i] = (uint32_t)(*nleaves - 1);
		} else if (node->module == MF_MODULE_WEIGHT) {
			if (loc[node->parent] != MF_NONE) /* (a leaf may have two: they add up) */
				(*leaves)[loc[node->parent]].time =
				    mf_sat_add((*leaves)[loc[node->parent]].time, node->bytes,
					       &m->saturated[MF_METRIC_TIME]);
		} else if (node->module == MF_MODULE_SIZES) {
			; /* (read with its leaf) */
		} else if (node->module == MF_MODULE_TRUNCATED) {
			loc[i] = m->idx->truncated_location;
		} else if (node->module == MF_MODULE_NONE) {
			r = mf_location(m, MF_NONE, node->rel_pc, false, &loc[i]);
		} else if (node->module == MF_MODULE_TAG) {
			r = mf_tag_location(m, proc, node->rel_pc, &loc[i]);
		} else if (node->module < proc->nmodules) {
			r = mf_location(m, proc->module_of[node->module], node->rel_pc, false,
					&loc[i]);
			/* the frame below a signal return is the instruction the signal
			 * interrupted (its node, a caller's, comes first in the file) */
			const struct mf_location *l = r ? NULL : &m->idx->locations[loc[i]];
			const uint32_t below =
			    l && l->sigreturn && node->parent ? loc[node->parent] : MF_NONE;
			if (below != MF_NONE && m->idx->locations[below].module != MF_NONE &&
			    !m->idx->locations[below].interrupted)
				r = mf_location(m, m->idx->locations[below].module,
						m->idx->locations[below].offset, true,
						&loc[node->parent]);
		} else {
			r = -EINVAL; /* not checked against the module map */
		}
	}
	return r;
}

static int mf_size_add(struct mf_model *m, uint32_t sample, uint32_t bucket, uint64_t count,
		       uint64_t rate)
{
	if (!count)
		return 0;
	struct mf_size_cell *c = mf_array_push(m->sizes, m->nsizes, m->cap_sizes);
	if (!c)
		return -ENOMEM;
	*c = (struct mf_size_cell){sample, bucket,
				   mf_sat_mul(count, rate, &m->saturated[MF_METRIC_CALLS])};
	return 0;
}

/* A leaf's record (format 4): its temporaries, and its size histogram as cells of sample. The
 * dense histogram, if any, is a child node found among the nodes after the leaf. */
static int mf_leaf_record(struct mf_model *m, struct mf_process *proc, const struct mf_profile *p,
			  const struct mf_leaf_calls *l, uint32_t sample, uint64_t *temporaries,
			  uint64_t *leaked, uint64_t *peak, uint64_t *shortl, uint64_t *most,
			  uint64_t *lived)
{
	struct mf_leaf x;
	memcpy(&x, &p->nodes[l->node + 1], sizeof(x));
	*temporaries = x.temporaries;
	if (p->header.records & MF_RECORD_LIFE) {
		struct mf_life life;
		mf_profile_life_get(p, p->nodes, l->node, &life);
		/* (frees are counted after blocks: a file read meanwhile may show more; sampled
		 * (format 5), the sampled blocks', scaled as the calls) */
		const uint64_t rate = p->header.sample_rate;
		leaked[0] = mf_sat_mul(mf_life_live_blocks(&life), rate,
				       &m->saturated[MF_METRIC_LEAKED_BLOCKS]);
		leaked[1] =
		    mf_sat_mul(mf_life_live_bytes(&life), rate, &m->saturated[MF_METRIC_LEAKED]);
		if (mf_profile_peaks_lazy(p))
			mf_life_settle_record(&life, proc->peak_id);
		if (p->header.version >= 6)
			proc->peak_blocks = mf_sat_add(proc->peak_blocks, life.peak_blocks,
						       &m->saturated[MF_METRIC_PEAK_BLOCKS]);
		peak[0] = mf_sat_mul(life.peak_blocks, rate, &m->saturated[MF_METRIC_PEAK_BLOCKS]);
		peak[1] = mf_sat_mul(life.peak_bytes, rate, &m->saturated[MF_METRIC_PEAK]);
		uint64_t n = 0;
		for (uint32_t b = 0; b < m->short_buckets && b < MF_LIFETIME_BUCKETS; b++)
			n = mf_sat_add(n, life.lifetime[b], &m->saturated[MF_METRIC_SHORT]);
		*shortl = mf_sat_mul(n, rate, &m->saturated[MF_METRIC_SHORT]);
		most[0] = mf_sat_mul(life.max_blocks, rate, &m->saturated[MF_METRIC_MAX_BLOCKS]);
		most[1] = mf_sat_mul(life.max_bytes, rate, &m->saturated[MF_METRIC_MAX_LIVE]);
		n = 0;
		for (uint32_t b = 0; b < MF_LIFETIME_BUCKETS; b++)
			n = mf_sat_add(n, life.lifetime[b], &m->saturated[MF_METRIC_FREED]);
		lived[0] = mf_sat_mul(n, rate, &m->saturated[MF_METRIC_FREED]);
		/* (the sum is kept modulo 2^64: one below what the histogram's lower bounds add
		 * up to went round, and stands as saturated) */
		int wrapped = 0;
		uint64_t least = 0;
		for (uint32_t b = 1; b < MF_LIFETIME_BUCKETS; b++)
			least = mf_sat_add(least,
					   mf_sat_mul(life.lifetime[b], 1ull << (b - 1), &wrapped),
					   &wrapped);
		if (wrapped || life.lifetime_ns < least)
			m->saturated[MF_METRIC_LIFETIME] = 1, life.lifetime_ns = UINT64_MAX;
		lived[1] = mf_sat_mul(life.lifetime_ns, rate, &m->saturated[MF_METRIC_LIFETIME]);
		for (uint32_t b = 0; b < MF_LIFETIME_BUCKETS; b++) {
			struct mf_size_cell *c =
			    life.lifetime[b] ? mf_array_push(m->lives, m->nlives, m->cap_lives)
					     : NULL;
			if (life.lifetime[b] && !c)
				return -ENOMEM;
			if (c)
				*c = (struct mf_size_cell){
				    sample, b,
				    mf_sat_mul(life.lifetime[b], rate,
					       &m->saturated[MF_METRIC_CALLS])};
		}
	}
	int r = 0;
	for (int i = 0; !r && i < MF_LEAF_SIZES; i++)
		if (x.size_key[i] && x.size_key[i] <= MF_SIZE_BUCKETS)
			r = mf_size_add(m, sample, x.size_key[i] - 1u, x.size_count[i],
					p->header.sample_rate);
	return r;
}

/* The dense size histograms of a thread's leaves: each under its leaf, the leaves[loc[leaf]]
 * that counted calls (a leaf that counted none has no sample and loc MF_NONE). */
static int mf_dense_sizes(struct mf_model *m, struct mf_profile *p, const uint32_t *loc,
			  const struct mf_leaf_calls *leaves)
{
	int r = 0;
	for (uint64_t i = 1, after = 0, mark = 0; !r && i < p->node_count; i += 1 + after) {
		mf_profile_release_behind(p, &mark, i);
		const struct mf_node *node = &p->nodes[i];
		after = mf_profile_slots_after(p, node);
		if (node->module != MF_MODULE_SIZES || loc[node->parent] == MF_NONE)
			continue;
		uint32_t sample = leaves[loc[node->parent]].sample;
		uint64_t count[MF_SIZES_SLOTS * 4];
		memcpy(count, &p->nodes[i + 1], sizeof(count));
		for (uint32_t b = 0; !r && b < MF_SIZE_BUCKETS; b++)
			r = mf_size_add(m, sample, b, count[b], p->header.sample_rate);
	}
	return r;
}

int mf_model_add_thread(struct mf_model *m, uint32_t process, struct mf_profile *p)
{
	for (int k = 0; m->zeros && k < MF_METRICS; k++) /* (finished before: no longer) */
		if (m->values[k] == m->zeros)
			m->values[k] = NULL;
	free(m->zeros);
	m->zeros = NULL;
	uint32_t thread;
	int r = mf_thread_new(m, process, p, &thread);
	if (r)
		return r;
	uint64_t n = p->node_count ? p->node_count : 1;
	mf_profile_release(p, 0, p->node_count); /* (read whole when it was checked) */
	uint32_t *up = malloc(n * sizeof(*up)), *loc = malloc(n * sizeof(*loc));
	struct mf_leaf_calls *leaves = NULL;
	size_t nleaves = 0;
	r = up && loc ? mf_thread_nodes(m, &m->processes[process], p, up, loc, &leaves, &nleaves)
		      : -ENOMEM;
	const uint64_t rate = p->header.sample_rate;
	int records = p->header.version >= 4;
	m->has_leaf_records |= records;
	m->has_lifetimes |= !!(p->header.records & MF_RECORD_LIFE);
	m->life_old += (p->header.records & MF_RECORD_LIFE) && !mf_profile_life_max(p);
	uint64_t mark = 0;
	for (size_t i = 0; !r && i < nleaves; i++) {
		uint32_t stack, sample;
		uint64_t temporaries = 0, leaked[2] = {0, 0}, peak[2] = {0, 0}, shortl = 0;
		uint64_t most[2] = {0, 0}, lived[2] = {0, 0};
		mf_profile_release_behind(p, &mark, leaves[i].node);
		if ((r = mf_leaf_stack(m, up, loc, &leaves[i], &stack)) ||
		    (r = mf_sample_at(m, stack, thread, &sample)))
			break;
		leaves[i].sample = sample;
		if (records) {
			if ((r = mf_leaf_record(m, &m->processes[process], p, &leaves[i], sample,
						&temporaries, leaked, peak, &shortl, most, lived)))
				break;
		}
		uint64_t value[MF_METRICS] = {
		    [MF_METRIC_CALLS] =
			mf_sat_mul(leaves[i].calls, rate, &m->saturated[MF_METRIC_CALLS]),
		    [MF_METRIC_BYTES] =
			mf_sat_mul(leaves[i].bytes, rate, &m->saturated[MF_METRIC_BYTES]),
		    [MF_METRIC_TIME] = leaves[i].time,
		    [MF_METRIC_TEMPORARY] =
			mf_sat_mul(temporaries, rate, &m->saturated[MF_METRIC_TEMPORARY]),
		    [MF_METRIC_LEAKED_BLOCKS] = leaked[0],
		    [MF_METRIC_LEAKED] = leaked[1],
		    [MF_METRIC_PEAK_BLOCKS] = peak[0],
		    [MF_METRIC_PEAK] = peak[1],
		    [MF_METRIC_SHORT] = shortl,
		    [MF_METRIC_MAX_BLOCKS] = most[0],
		    [MF_METRIC_MAX_LIVE] = most[1],
		    [MF_METRIC_FREED] = lived[0],
		    [MF_METRIC_LIFETIME] = lived[1],
		};
		r = mf_sample_add(m, sample, value);
	}
	if (!r && records)
		r = mf_dense_sizes(m, p, loc, leaves);
	mf_profile_release(p, 0, p->node_count);
	free(leaves);
	free(loc);
	free(up);
	return r;
}

int mf_model_span(const struct mf_model *m, uint64_t *start, uint64_t *end)
{
	int known = m->nprocesses > 0;
	*start = *end = 0;
	for (size_t i = 0; i < m->nprocesses; i++) {
		const struct mf_process *p = &m->processes[i];
		if (p->start_ns && (!*start || p->start_ns < *start))
			*start = p->start_ns;
		*end = p->end_ns > *end ? p->end_ns : *end;
		known &= p->start_ns && p->end_ns >= p->start_ns;
	}
	return known;
}

int mf_model_cells_by(const struct mf_model *m, const struct mf_size_cell *cells, size_t n,
		      int by_stack, size_t **first, uint32_t **cell)
{
	size_t keys = by_stack ? m->nstacks : m->nsamples;
	size_t *f = calloc(keys + 2, sizeof(*f));
	uint32_t *c = malloc((n ? n : 1) * sizeof(*c));
	if (!f || !c) {
		free(f);
		free(c);
		return -ENOMEM;
	}
#define MF_CELL_KEY(i) (by_stack ? m->samples[cells[i].sample].stack : cells[i].sample)
	for (size_t i = 0; i < n; i++)
		f[MF_CELL_KEY(i) + 2]++;
	for (size_t k = 0; k < keys; k++)
		f[k + 2] += f[k + 1];
	for (size_t i = 0; i < n; i++)
		c[f[MF_CELL_KEY(i) + 1]++] = (uint32_t)i;
#undef MF_CELL_KEY
	*first = f;
	*cell = c;
	return 0;
}

int mf_model_median(const struct mf_size_cell *cells, const size_t *first, const uint32_t *cell,
		    const uint32_t *items, size_t count, uint32_t buckets)
{
	uint64_t hist[128] = {0}, total = 0;
	for (size_t i = 0; i < count; i++)
		for (size_t k = first[items[i]]; k < first[items[i] + 1]; k++) {
			const struct mf_size_cell *c = &cells[cell[k]];
			if (c->bucket < buckets && c->bucket < 128) {
				hist[c->bucket] += c->count;
				total += c->count;
			}
		}
	uint64_t seen = 0;
	for (uint32_t b = 0; total && b < buckets && b < 128; b++)
		if ((seen += hist[b]) * 2 >= total)
			return (int)b;
	return -1;
}

uint64_t mf_model_total(const struct mf_model *m, enum mf_metric metric, uint64_t *entry)
{
	uint64_t total = 0;
	int flag = 0;
	if (entry)
		memset(entry, 0, MF_ENTRY_COUNT * sizeof(*entry));
	for (size_t i = 0; i < m->nsamples; i++) {
		uint64_t v = m->values[metric][i];
		total = mf_sat_add(total, v, &flag);
		if (entry) {
			uint32_t e = m->stacks[m->samples[i].stack].entry;
			entry[e] = mf_sat_add(entry[e], v, &flag);
		}
	}
	return total;
}

void mf_model_free(struct mf_model *m)
{
	for (size_t i = 0; i < m->nmodules; i++)
		free((char *)m->modules[i].path);
	for (size_t i = 0; i < m->nprocesses; i++) {
		struct mf_process *p = &m->processes[i];
		free((char *)p->dir);
		free((char *)p->name);
		free((char *)p->exe);
		free((char *)p->cmdline);
		free((char *)p->exec_from_dir);
		free((char *)p->tags);
		free(p->snaps);
		free(p->module_of);
	}
	for (size_t i = 0; i < m->nthreads; i++) {
		free((char *)m->threads[i].path);
		free(m->threads[i].records);
	}
	free(m->modules);
	free(m->frames);
	free(m->stack_frames);
	free(m->stacks);
	free(m->samples);
	free(m->sizes);
	free(m->lives);
	for (int k = 0; k < MF_METRICS; k++)
		if (m->values[k] != m->zeros)
			free(m->values[k]);
	free(m->zeros);
	free(m->threads);
	free(m->processes);
	if (m->idx) {
		for (size_t i = 0; i < m->idx->ntags; i++)
			free(m->idx->tag_names[i]);
		free(m->idx->tag_names);
		free(m->idx->tag_location);
		free(m->idx->locations);
		free(m->idx->location_set.slot);
		free(m->idx->stack_set.slot);
		free(m->idx->module_set.slot);
		free(m->idx->scratch);
		free(m->idx);
	}
	memset(m, 0, sizeof(*m));
}
