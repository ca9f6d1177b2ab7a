/* Objects that reach an allocator past the entry points, pointed back at them. A library opened
 * with RTLD_DEEPBIND looks its symbols up in its own dependencies first, libc among them, so its
 * calls to malloc go to libc's and never through the preloaded entry points; a namespace
 * made by dlmopen has a libc of its own, which the preload never reaches; and an allocator
 * preloaded before the profiler comes first in every object's lookup. At start, the loaded
 * objects whose slots lead to such an allocator are pointed back; for those loaded later, the
 * loader's own
 * _dl_open (every dlopen and dlmopen, the program's or libc's, goes through it, with the
 * caller's address that decides the RUNPATH and the namespace) is watched, through its slot in
 * the loader's table of functions; once it has loaded such objects, their slots for the
 * allocation functions are pointed at entry points that record each call and forward it to the
 * allocator the slot led to (each namespace keeps its own heap: its libc's free expects its
 * libc's blocks). Runs in the program's dlopen, after the loader's work: no malloc, errno kept.
 * What runs inside that dlopen (the library's constructors) is not seen. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"
#include "thread.h"

/* The allocation functions a slot may lead to, as the stubs below take them. */
enum {
	MF_REBIND_MALLOC,
	MF_REBIND_CALLOC,
	MF_REBIND_REALLOC,
	MF_REBIND_REALLOCARRAY,
	MF_REBIND_POSIX_MEMALIGN,
	MF_REBIND_ALIGNED_ALLOC,
	MF_REBIND_MEMALIGN,
	MF_REBIND_VALLOC,
	MF_REBIND_PVALLOC,
	MF_REBIND_FREE,
	MF_REBIND_NAMES
};
static const char *const mf_rebind_names[MF_REBIND_NAMES] = {
    "malloc",	     "calloc",	 "realloc", "reallocarray", "posix_memalign",
    "aligned_alloc", "memalign", "valloc",  "pvalloc",	    "free"};

/* The allocators forwarded to (each namespace's libc, say), and for each a stub per function:
 * its allocator's address into the register after the call's arguments, a jump to interpose.c's
 * entry point (16 bytes, in the order of the names above; the instructions: lib/arch/). */
enum { MF_REBIND_TABLES = 16, MF_REBIND_STUB = 16 };
__attribute__((used, visibility("hidden"))) struct mf_allocator mf_rebind_next[MF_REBIND_TABLES];
static unsigned mf_rebind_state[MF_REBIND_TABLES]; /* 0 free, 1 being filled, 2 in use */
_Static_assert(sizeof(struct mf_allocator) == 72, "the stubs' stride");
extern const char mf_rebind_stubs[] __attribute__((visibility("hidden")));
/* clang-format off */
__asm__(MF_ARCH_REBIND_STUB
	".macro MF_REBIND_STUBS k\n"
	"MF_REBIND_STUB \\k, mf_next_malloc, " MF_ARCH_ARG1 "\n"
	"MF_REBIND_STUB \\k, mf_next_calloc, " MF_ARCH_ARG2 "\n"
	"MF_REBIND_STUB \\k, mf_next_realloc, " MF_ARCH_ARG2 "\n"
	"MF_REBIND_STUB \\k, mf_next_reallocarray, " MF_ARCH_ARG3 "\n"
	"MF_REBIND_STUB \\k, mf_next_posix_memalign, " MF_ARCH_ARG3 "\n"
	"MF_REBIND_STUB \\k, mf_next_aligned_alloc, " MF_ARCH_ARG2 "\n"
	"MF_REBIND_STUB \\k, mf_next_memalign, " MF_ARCH_ARG2 "\n"
	"MF_REBIND_STUB \\k, mf_next_valloc, " MF_ARCH_ARG1 "\n"
	"MF_REBIND_STUB \\k, mf_next_pvalloc, " MF_ARCH_ARG1 "\n"
	"MF_REBIND_STUB \\k, mf_next_free, " MF_ARCH_ARG1 "\n"
	".endm\n"
	".text\n"
	".p2align 4\n"
	".globl mf_rebind_stubs\n"
	".hidden mf_rebind_stubs\n"
	".type mf_rebind_stubs, %function\n"
	"mf_rebind_stubs:\n"
	".irp k,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"MF_REBIND_STUBS \\k\n"
	".endr\n"
	".size mf_rebind_stubs, .-mf_rebind_stubs\n");
/* clang-format on */

_Static_assert(MF_REBIND_NAMES == MF_ENTRY_OWN_COUNT, "the entry points in one order");
#define mf_rebind_own mf_entry_own

MF_TLS uintptr_t mf_rebind_watched;

/* The loader's _dl_open and its slot in _rtld_global_ro. */
typedef void *mf_dl_open_fn(const char *, int, const void *, Lmid_t, int, char **, char **);
static mf_dl_open_fn *mf_rebind_real;
#define MF_LM_ID_CALLER (-2) /* glibc's __LM_ID_CALLER: dlopen's, the caller's namespace */

/* The allocator a group of objects leads to: what a lookup from root finds for each name. */
struct mf_rebind_group {
	void *target[MF_REBIND_NAMES];
	void *forward[MF_REBIND_NAMES]; /* what their slots are pointed at (NULL: left alone) */
};

/* A table for the allocator (its stubs), found or taken; -1 when all are taken. */
static int mf_rebind_table(const struct mf_allocator *next)
{
	for (int k = 0; k < MF_REBIND_TABLES; k++)
		if (__atomic_load_n(&mf_rebind_state[k], __ATOMIC_ACQUIRE) == 2 &&
		    !memcmp(&mf_rebind_next[k], next, sizeof(*next)))
			return k;
	for (int round = 0; round < 2; round++)
		for (int k = 0; k < MF_REBIND_TABLES; k++) {
			unsigned free_ = 0,
				 state = __atomic_load_n(&mf_rebind_state[k], __ATOMIC_ACQUIRE);
			const void *lo, *hi;
			/* (the second round: a table whose allocator was unloaded with every object
			 * that led to it) */
			if (round && state == 2 &&
			    mf_namespaces_mapped((void *)mf_rebind_next[k].malloc, &lo, &hi) < 0)
				free_ = 2;
			if (!__atomic_compare_exchange_n(&mf_rebind_state[k], &free_, 1, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				continue;
			mf_rebind_next[k] = *next;
			__atomic_store_n(&mf_rebind_state[k], 2, __ATOMIC_RELEASE);
			return k;
		}
	return -1;
}

/* What the group's slots are to be pointed at: the entry points, where its allocator is the one
 * they forward to; else the stubs of a table for it. 0, or -1 (nothing to do, or no table). */
static int mf_rebind_forward(void *root, struct mf_rebind_group *g)
{
	void **t = g->target;
	for (int e = 0; e < MF_REBIND_NAMES; e++)
		t[e] = dlsym(root, mf_rebind_names[e]);
	if (!t[MF_REBIND_MALLOC] || !t[MF_REBIND_FREE])
		dlerror(); /* (the program's dlerror must not find ours) */
	if (!t[MF_REBIND_MALLOC] || !t[MF_REBIND_FREE] || t[MF_REBIND_MALLOC] == mf_rebind_own[0])
		return -1; /* (no allocator there, or the entry points themselves) */
	struct mf_allocator next = {
	    /* (the stubs forward to these) */
	    t[MF_REBIND_MALLOC],	 t[MF_REBIND_CALLOC],	     t[MF_REBIND_REALLOC],
	    t[MF_REBIND_POSIX_MEMALIGN], t[MF_REBIND_ALIGNED_ALLOC], t[MF_REBIND_MEMALIGN],
	    t[MF_REBIND_VALLOC],	 t[MF_REBIND_PVALLOC],	     t[MF_REBIND_FREE]};
	for (int e = 0; e < MF_REBIND_NAMES; e++) /* (where the lookup finds ours: they count) */
		if (t[e] == mf_rebind_own[e])
			t[e] = NULL;
	if (!memcmp(&next, &mf_real.alloc, sizeof(next))) {
		for (int e = 0; e < MF_REBIND_NAMES; e++)
			g->forward[e] = t[e] ? mf_rebind_own[e] : NULL;
		return 0;
	}
	int k = mf_rebind_table(&next);
	if (k < 0) {
		MF_LOG_ONCE("more than %d allocators behind libraries opened with RTLD_DEEPBIND or "
			    "in other namespaces; the calls of the next ones are not recorded",
			    MF_REBIND_TABLES);
		return -1;
	}
	for (int e = 0; e < MF_REBIND_NAMES; e++) { /* (reallocarray's stub calls realloc) */
		void *to = e == MF_REBIND_REALLOCARRAY ? t[MF_REBIND_REALLOC] : t[e];
		g->forward[e] =
		    t[e] && to
			? (void *)(mf_rebind_stubs + (k * MF_REBIND_NAMES + e) * MF_REBIND_STUB)
			: NULL;
	}
	return 0;
}

struct mf_rebind_slots {
	const struct mf_got_object *o;
	const struct mf_rebind_group *g;
	int failed;
};

/* A slot of one of the names that leads to the group's allocator, or (lazy binding, not yet
 * resolved) back into its own object's PLT: pointed at the group's entry point. (A libc's own
 * calls of its malloc go through such slots too.) */
static int mf_rebind_slot(void **slot, const char *name, const ElfW(Sym) * sym, unsigned type,
			  void *arg)
{
	struct mf_rebind_slots *s = arg;
	for (int e = 0; e < MF_REBIND_NAMES; e++) {
		void *to = s->g->forward[e], *at = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (!to || strcmp(name, mf_rebind_names[e]) || at == to)
			continue;
		uintptr_t a = (uintptr_t)at;
		int lazy = type == MF_ARCH_R_JUMP_SLOT && a >= s->o->start && a < s->o->end &&
			   (sym->st_shndx == SHN_UNDEF || a != s->o->bias + sym->st_value);
		if ((at == s->g->target[e] || lazy) && mf_got_write(s->o, slot, to))
			s->failed = 1;
	}
	return 0;
}

/* An allocator preloaded before the profiler: every object of the base namespace but the
 * profiler's leads to it, and these are what their slots are pointed at. */
static struct mf_rebind_group mf_rebind_first;
static int mf_rebind_first_on;

/* The slot watched, and ld.so's object that holds it (mf_rebind_undo puts _dl_open back). */
static void **mf_rebind_watched_slot;
static struct mf_got_object mf_rebind_watched_ldso;

/* The objects to look at, collected with the loader's lock held. */
enum { MF_REBIND_BATCH = 64 };
struct mf_rebind_scan {
	const struct link_map *handle; /* the object just opened (NULL: at start, the base one) */
	int deep;		       /* with RTLD_DEEPBIND */
	int first;		       /* an allocator preloaded before the profiler */
	const struct link_map *after;  /* then the base namespace's last object before (NULL:
					* from its first) */
	const struct link_map *root;   /* out: whose lookup finds the group's allocator */
	int ns;			       /* out: its namespace (0: the base one) */
	struct mf_got_object objects[MF_REBIND_BATCH];
	int skip;  /* those in the list before them, looked at already */
	int count; /* collected */
	int more;  /* more than a batch */
};

/* In a dl_iterate_phdr callback: the handle's namespace (found by its list), and its objects
 * from skip on: in the base namespace those opened after `after` (with RTLD_DEEPBIND, or with
 * an allocator preloaded before the profiler), in another every object (all lead to its
 * allocator). */
static int mf_rebind_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	struct mf_rebind_scan *s = arg;
	struct link_map *heads[MF_NAMESPACES_MAX];
	int n = mf_namespaces_heads(heads, MF_NAMESPACES_MAX), ns = -1;
	const struct link_map *l;
	for (int i = 0; i < n && ns < 0; i++)
		for (l = heads[i]; l && ns < 0; l = l->l_next)
			if (l == s->handle || (!s->handle && !i))
				ns = i;
	if (ns < 0)
		return 1;
	s->root = s->deep ? s->handle : heads[ns];
	s->ns = ns;
	if (ns == 0 && !s->deep && !s->first)
		return 1;
	if (ns == 0) { /* (after unloaded since: nothing is known of what came after it) */
		for (l = heads[0]; l && s->after && l != s->after; l = l->l_next)
			;
		if (!l)
			return 1;
		l = s->after ? l->l_next : l;
	} else {
		l = heads[ns];
	}
	for (int i = 0; l && i < s->skip; i++)
		l = l->l_next;
	for (; l; l = l->l_next) {
		struct dl_phdr_info object;
		if (s->count == MF_REBIND_BATCH) {
			s->more = 1;
			break;
		}
		if (!mf_namespaces_info(l, &object) &&
		    !mf_got_object(&object, &s->objects[s->count]))
			s->count++;
		s->skip++;
	}
	return 1;
}

/* The objects a dlopen of handle loaded that lead to an allocator past the entry points: their
 * slots pointed back at them. deep: it was opened with RTLD_DEEPBIND; after: the base
 * namespace's last object before it (with an allocator preloaded before the profiler, the
 * base namespace's objects from there on are looked at too; at start, handle and after NULL,
 * all of them). The profiler's own object is left as it is. */
static void mf_rebind_objects(const struct link_map *handle, int deep, const struct link_map *after)
{
	struct mf_rebind_scan s = {
	    .handle = handle, .deep = deep, .first = mf_rebind_first_on, .after = after};
	struct mf_rebind_group g;
	const struct mf_rebind_group *to = &g;
	int grouped = 0, failed = 0;
	do {
		s.count = s.more = 0;
		mf_objects_iterate(mf_rebind_collect, &s);
		/* (the base namespace without RTLD_DEEPBIND: the allocator preloaded first) */
		if (s.count && !grouped++ && s.first && !s.deep && !s.ns)
			to = &mf_rebind_first;
		else if (s.count && grouped == 1 && mf_rebind_forward((void *)s.root, &g))
			return;
		for (int i = 0; i < s.count; i++) {
			struct mf_rebind_slots slots = {&s.objects[i], to, 0};
			uintptr_t self = (uintptr_t)mf_rebind_own[MF_REBIND_MALLOC];
			if (self - s.objects[i].start < s.objects[i].end - s.objects[i].start)
				continue;
			if (mf_got_each(&s.objects[i], mf_rebind_slot, &slots) || slots.failed)
				failed = 1;
		}
	} while (s.more);
	if (failed)
		MF_LOG_ONCE("cannot point every allocation call of an object that reaches another "
			    "allocator at the profiler (its tables could not be read or written): "
			    "some of its calls are not recorded");
}

/* A slot pointed at an entry point for the allocator preloaded first: led to it again. */
static int mf_rebind_slot_back(void **slot, const char *name, const ElfW(Sym) * sym, unsigned type,
			       void *arg)
{
	(void)sym, (void)type;
	struct mf_rebind_slots *s = arg;
	for (int e = 0; e < MF_REBIND_NAMES; e++)
		if (s->g->forward[e] && s->g->target[e] &&
		    __atomic_load_n(slot, __ATOMIC_ACQUIRE) == s->g->forward[e] &&
		    !strcmp(name, mf_rebind_names[e]) && mf_got_write(s->o, slot, s->g->target[e]))
			s->failed = 1;
	return 0;
}

int mf_rebind_undo(void)
{
	int failed = 0;
	/* (a dlopen already past the slot finishes in mf_rebind_open_watched, as before) */
	if (mf_rebind_watched_slot &&
	    mf_got_write(&mf_rebind_watched_ldso, mf_rebind_watched_slot, (void *)mf_rebind_real))
		failed = 1;
	if (!mf_rebind_first_on)
		return failed ? -1 : 0;
	__atomic_store_n(&mf_rebind_first_on, 0, __ATOMIC_RELEASE);
	struct mf_rebind_scan s = {.first = 1};
	uintptr_t self = (uintptr_t)mf_rebind_own[MF_REBIND_MALLOC];
	do {
		s.count = s.more = 0;
		mf_objects_iterate(mf_rebind_collect, &s);
		for (int i = 0; i < s.count; i++) {
			struct mf_rebind_slots slots = {&s.objects[i], &mf_rebind_first, 0};
			if (self - s.objects[i].start < s.objects[i].end - s.objects[i].start ||
			    mf_attach_skip(s.objects[i].start))
				continue;
			if (mf_got_each(&s.objects[i], mf_rebind_slot_back, &slots) || slots.failed)
				failed = 1;
		}
	} while (s.more);
	return failed ? -1 : 0;
}

/* In a dl_iterate_phdr callback: the base namespace's last object. */
static int mf_rebind_last(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	struct link_map *head;
	const struct link_map *l = mf_namespaces_heads(&head, 1) ? head : NULL;
	while (l && l->l_next)
		l = l->l_next;
	*(const struct link_map **)arg = l;
	return 1;
}

static MF_NOINLINE void *mf_rebind_open_watched(const char *file, int mode, const void *caller,
						Lmid_t nsid, int argc, char **argv, char **env)
{
	const struct link_map *last = NULL;
	int deep = (mode & RTLD_DEEPBIND) != 0;
	if (deep || mf_rebind_first_on)
		mf_objects_iterate(mf_rebind_last, &last);
	uintptr_t outer = mf_rebind_watched;
	mf_rebind_watched = (uintptr_t)__builtin_frame_address(0);
	void *h = mf_rebind_real(file, mode, caller, nsid, argc, argv, env);
	mf_rebind_watched = outer;
	if (h) {
		int saved = errno;
		if (nsid != MF_LM_ID_CALLER && !mf_namespaces_listed()) /* (2 once one is made) */
			MF_LOG_ONCE("this C library does not list its namespaces for debuggers, "
				    "or has no _dl_find_object (glibc 2.35 has both): the calls of "
				    "libraries opened with dlmopen are not recorded");
		unsigned held = mf_tls.loader_held; /* (a dlopen inside a callback: no fork wait) */
		mf_tls.loader_held = mf_loader_held((uintptr_t)__builtin_frame_address(0));
		mf_rebind_objects(h, deep, last);
		mf_tls.loader_held = held;
		errno = saved;
	}
	return h;
}

/* An ordinary dlopen, into the base namespace while there is no other, and no allocator is
 * preloaded before the profiler, goes on to the loader's with a jump: nothing of ours stands in
 * the stacks of its allocations. */
static void *mf_rebind_open(const char *file, int mode, const void *caller, Lmid_t nsid, int argc,
			    char **argv, char **env)
{
	if (mf_unlikely(mode & RTLD_DEEPBIND) || mf_unlikely(nsid != MF_LM_ID_CALLER) ||
	    mf_unlikely(mf_rebind_first_on) || mf_unlikely(mf_namespaces_any()))
		return mf_rebind_open_watched(file, mode, caller, nsid, argc, argv, env);
	return mf_rebind_real(file, mode, caller, nsid, argc, argv, env);
}

/* ld.so's table of functions for libc (_rtld_global_ro, glibc-private): its slot for _dl_open,
 * found between its neighbours as glibc lays them out (_dl_debug_printf, _dl_mcount,
 * _dl_lookup_symbol_x, _dl_open, _dl_close, ...), _dl_mcount (exported) among them and all in
 * ld.so's code; then proved by a dlopen of our own, which must reach it with _dl_open's
 * arguments (mf_rebind_probe) before the watch is put there. */
struct mf_rebind_ldso {
	const void *mcount;
	uintptr_t code_lo, code_hi;
	struct mf_got_object object;
	int found;
};

static int mf_rebind_ldso_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_rebind_ldso *l = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    (uintptr_t)l->mcount - lo < ph->p_memsz) {
			l->code_lo = lo;
			l->code_hi = lo + ph->p_memsz;
			l->found = !mf_got_object(info, &l->object);
			return 1;
		}
	}
	return 0;
}

static void **mf_rebind_slot_find(struct mf_rebind_ldso *l)
{
	void **ro = dlsym(RTLD_DEFAULT, "_rtld_global_ro");
	l->mcount = dlsym(RTLD_DEFAULT, "_dl_mcount");
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!ro || !l->mcount || !dladdr1(ro, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
		dlerror();
		return NULL;
	}
	mf_objects_iterate(mf_rebind_ldso_visit, l);
	size_t n = sym->st_size / sizeof(void *);
	for (size_t i = 1; l->found && i + 4 < n; i++) {
		if (ro[i] != l->mcount)
			continue;
		int code = 1;
		for (size_t k = i - 1; k <= i + 4; k++)
			code &= (uintptr_t)ro[k] >= l->code_lo && (uintptr_t)ro[k] < l->code_hi;
		return code ? &ro[i + 2] : NULL;
	}
	return NULL;
}

/* The slot found is first pointed here, which passes every call on unchanged (whatever the slot
 * holds, it gets the arguments it was called with) and notes whether the profiler's own dlopen
 * of file came through it as _dl_open is called: file, RTLD_NOLOAD, the caller's namespace. */
static const char *mf_rebind_probe_file;
static int mf_rebind_probe_seen;

static void *mf_rebind_probe(const char *file, int mode, const void *caller, Lmid_t nsid, int argc,
			     char **argv, char **env)
{
	if (file == mf_rebind_probe_file && (mode & RTLD_NOLOAD) && nsid == MF_LM_ID_CALLER)
		__atomic_store_n(&mf_rebind_probe_seen, 1, __ATOMIC_RELAXED);
	return mf_rebind_real(file, mode, caller, nsid, argc, argv, env);
}

/* Watches the slot if it proves to be _dl_open's: 0, or -1 (the slot is as it was). */
static int mf_rebind_watch(struct mf_rebind_ldso *l, void **slot)
{
	Dl_info self;
	if (!dladdr((void *)mf_rebind_watch, &self) || !self.dli_fname)
		return -1;
	mf_rebind_probe_file = self.dli_fname;
	mf_rebind_real = *slot;
	if (mf_got_write(&l->object, slot, (void *)mf_rebind_probe))
		return -1;
	void *h = dlopen(mf_rebind_probe_file, RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		mf_real.dlclose(h); /* (not ours: nothing is unloaded) */
	void *to = mf_rebind_probe_seen ? (void *)mf_rebind_open : (void *)mf_rebind_real;
	if (mf_got_write(&l->object, slot, to)) /* (the probe stays: it passes calls on) */
		return -1;
	if (!mf_rebind_probe_seen)
		return -1;
	mf_rebind_watched_ldso = l->object;
	mf_rebind_watched_slot = slot;
	return 0;
}

/* In a namespace made before the watch began: its objects, rebound now. */
static int mf_rebind_heads(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	return mf_namespaces_heads(arg, MF_NAMESPACES_MAX);
}

/* An allocator preloaded before the profiler (not a program's own, whose calls of it inside
 * the program go through no slot): its group, which every object of the base namespace leads
 * to. 1 if there is one. */
static int mf_rebind_first_find(void)
{
	uintptr_t fn = (uintptr_t)dlsym(RTLD_DEFAULT, "malloc");
	struct mf_got_object program;
	dlerror();
	/* (the program's, a definition or a canonical PLT entry, is no allocator before us) */
	if (!fn || fn == (uintptr_t)mf_rebind_own[MF_REBIND_MALLOC] || mf_got_program(&program) ||
	    mf_got_holds(&program, fn))
		return 0;
	return mf_rebind_forward(RTLD_DEFAULT, &mf_rebind_first) == 0;
}

static void mf_rebind_start(void)
{
	mf_rebind_first_on = mf_rebind_first_find();
	struct mf_rebind_ldso l = {0};
	void **slot = mf_rebind_slot_find(&l);
	if (!slot || mf_rebind_watch(&l, slot)) {
		dlerror();
		mf_log("cannot watch the loader's dlopen in this C library (%s); the calls of "
		       "libraries opened with RTLD_DEEPBIND or dlmopen%s will not be recorded",
		       slot ? "its table is not laid out as known, or cannot be written"
			    : "its table is not laid out as known",
		       mf_rebind_first_on ? ", and of any loaded later that reach the allocator "
					    "preloaded before the profiler,"
					  : "");
	}
	if (mf_rebind_first_on)
		mf_rebind_objects(NULL, 0, NULL);
	struct link_map *heads[MF_NAMESPACES_MAX];
	int n = mf_namespaces_any() ? mf_objects_iterate(mf_rebind_heads, heads) : 0;
	for (int i = 1; i < n; i++)
		if (heads[i])
			mf_rebind_objects(heads[i], 0, NULL);
}

void mf_rebind_init(void)
{
	mf_busy_enter();
	mf_tls.own++; /* what the loader allocates meanwhile is the profiler's */
	mf_rebind_start();
	mf_tls.own--;
	mf_busy_leave();
}
