/* The dynamic loader's allocator. ld.so allocates through four pointers of its own (glibc
 * 2.32 on; a GOT before), set once at start to the first malloc, calloc, realloc and free in
 * the lookup order. When those are the profiler's, the loader's work for the profiler (loading
 * libunwind, each thread's block of libunwind's thread-local variables, the threads it starts)
 * comes back through its entry points as its own (mf_tls.own) and is served by the bootstrap
 * arena; when the program defines malloc itself, or an allocator is preloaded before the
 * profiler, that work would go straight to the program's allocator, which would see calls
 * that it does not see without the profiler, and give out blocks the profiler asked for. So
 * the pointers that do not lead to the profiler are found and led here: before glibc 2.32, by
 * ld.so's relocations that name them (its GOT slots, bound to the first definitions once every
 * object is relocated; those of the PLT lie outside its read-only data); from 2.32 on, in its
 * data that is read-only after relocation (each holds the address of its function, and
 * nothing else there does). The profiler's own calls are then served from the arena, and every
 * other goes on to the function the loader had. Never an address the loader did not hold;
 * nothing changed where a pointer found by its value is not found exactly once. Runs inside
 * malloc: no malloc, no stdio, errno kept. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"
#include "thread.h"

enum { MF_LD_MALLOC, MF_LD_CALLOC, MF_LD_REALLOC, MF_LD_FREE, MF_LD_COUNT };

static const char *const mf_ld_names[MF_LD_COUNT] = {"malloc", "calloc", "realloc", "free"};

/* What the loader called before its pointer was led here (set before the pointer changes). */
static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
} mf_ld_had;

static void *mf_ld_malloc(size_t n)
{
	void *p = mf_tls.own ? mf_real_arena(0, n, 0) : NULL;
	return p ? p : mf_ld_had.malloc(n);
}

static void *mf_ld_calloc(size_t n, size_t m)
{
	size_t total;
	void *p = NULL;
	if (mf_tls.own && !__builtin_mul_overflow(n, m, &total))
		p = mf_real_arena(0, total, 1);
	return p ? p : mf_ld_had.calloc(n, m);
}

/* A block of the arena moves to a new one of the arena (the profiler's own) or to the loader's
 * allocator; the old one is given back to the arena. */
static void *mf_ld_realloc(void *old, size_t n)
{
	void *p = mf_tls.own && (!old || mf_real_is_bootstrap(old)) ? mf_real_arena(0, n, 0) : NULL;
	if (!p && !mf_real_is_bootstrap(old))
		return mf_ld_had.realloc(old, n);
	if (!p && !(p = mf_ld_had.malloc(n)))
		return NULL;
	if (old) {
		size_t size = mf_real_bootstrap_size(old);
		memcpy(p, old, size < n ? size : n);
		mf_real_free_bootstrap(old);
	}
	return p;
}

static void mf_ld_free(void *p)
{
	if (!p && mf_tls.own) /* (the loader frees NULL while it loads libunwind) */
		return;
	if (mf_real_is_bootstrap(p))
		mf_real_free_bootstrap(p);
	else
		mf_ld_had.free(p);
}

enum { MF_LD_NAMED_MAX = 4 };

struct mf_ld_search {
	void *want[MF_LD_COUNT]; /* the loader's functions, or NULL where it has the profiler's */
	void **slot[MF_LD_COUNT];
	unsigned hits[MF_LD_COUNT];
	/* the slots its relocations name, that hold the function (glibc before 2.32) */
	void **named[MF_LD_COUNT][MF_LD_NAMED_MAX];
	unsigned named_count[MF_LD_COUNT];
	uintptr_t ro_lo, ro_hi; /* the pages the loader made read-only */
};

static int mf_ld_named(void **slot, const char *name, const ElfW(Sym) * sym, unsigned type,
		       void *arg)
{
	(void)sym, (void)type;
	struct mf_ld_search *s = arg;
	for (int i = 0; i < MF_LD_COUNT; i++)
		if (s->want[i] && !strcmp(name, mf_ld_names[i]) && *slot == s->want[i]) {
			if (s->named_count[i] < MF_LD_NAMED_MAX)
				s->named[i][s->named_count[i]] = slot;
			s->named_count[i]++;
		}
	return 0;
}

/* In ld.so's object (the one that holds _r_debug): its read-only-after-relocation data. */
static int mf_ld_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_ld_search *s = arg;
	const ElfW(Phdr) *relro = NULL;
	int ldso = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_GNU_RELRO)
			relro = p;
		if (p->p_type == PT_LOAD && (uintptr_t)&_r_debug >= start &&
		    (uintptr_t)&_r_debug < start + p->p_memsz)
			ldso = 1;
	}
	if (!ldso)
		return 0;
	struct mf_got_object o;
	if (!mf_got_object(info, &o))
		mf_got_each(&o, mf_ld_named, s);
	if (!relro)
		return 1;
	uintptr_t lo = info->dlpi_addr + relro->p_vaddr, hi = lo + relro->p_memsz,
		  page = (uintptr_t)getpagesize();
	s->ro_lo = lo & ~(page - 1);
	s->ro_hi = hi & ~(page - 1);
	for (void **w = (void **)((lo + sizeof(void *) - 1) & ~(sizeof(void *) - 1));
	     (uintptr_t)(w + 1) <= hi; w++)
		for (int i = 0; i < MF_LD_COUNT; i++)
			if (s->want[i] && *w == s->want[i]) {
				s->hits[i]++;
				s->slot[i] = w;
			}
	return 1;
}

/* Stores fn at slot, making its page writable for the store if the loader had made it
 * read-only. 0, or -1 (the page could not be made writable: nothing changed). */
static int mf_ld_store(void **slot, void *fn, const struct mf_ld_search *s)
{
	uintptr_t page = (uintptr_t)slot & ~((uintptr_t)getpagesize() - 1);
	int ro = page >= s->ro_lo && page < s->ro_hi;
	if (ro && mprotect((void *)page, (size_t)getpagesize(), PROT_READ | PROT_WRITE))
		return -1;
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)page, (size_t)getpagesize(), PROT_READ);
	return 0;
}

void mf_loader_alloc_take(void)
{
	static int done;
	if (done++)
		return;
	int saved = errno;
	struct mf_ld_search s;
	memset(&s, 0, sizeof(s));
	void *const here[MF_LD_COUNT] = {(void *)mf_ld_malloc, (void *)mf_ld_calloc,
					 (void *)mf_ld_realloc, (void *)mf_ld_free};
	void **const had[MF_LD_COUNT] = {(void **)&mf_ld_had.malloc, (void **)&mf_ld_had.calloc,
					 (void **)&mf_ld_had.realloc, (void **)&mf_ld_had.free};
	int any = 0, all = 1;
	for (int i = 0; i < MF_LD_COUNT; i++) {
		/* (the loader's own lookup: the first definition, with glibc's version) */
		*had[i] = dlsym(RTLD_DEFAULT, mf_ld_names[i]);
		all &= *had[i] != NULL;
		if (*had[i] && !mf_real_ours(*had[i]))
			s.want[i] = *had[i], any = 1;
	}
	if (!any || !all) {
		errno = saved;
		return;
	}
	mf_objects_iterate(mf_ld_visit, &s);
	for (int i = 0; i < MF_LD_COUNT; i++) {
		if (s.named_count[i] > MF_LD_NAMED_MAX)
			continue;
		for (unsigned k = 0; k < s.named_count[i]; k++)
			mf_ld_store(s.named[i][k], here[i], &s);
		if (!s.named_count[i] && s.want[i] && s.hits[i] == 1)
			mf_ld_store(s.slot[i], here[i], &s);
	}
	errno = saved;
}
