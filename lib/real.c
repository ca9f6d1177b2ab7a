/* Finding the next allocator: dlsym(RTLD_NEXT) for each entry point, so an allocator preloaded
 * after us (jemalloc, tcmalloc) still serves the memory; and what comes before us in the
 * lookup order (a program's own allocator, one preloaded before us, another copy of this
 * library). While dlsym itself allocates, a small static arena serves; its blocks are never
 * freed. No malloc of our own. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"

#define MF_BOOTSTRAP_SIZE  (64 * 1024)
#define MF_BOOTSTRAP_ALIGN 16

static _Alignas(MF_PAGE_SIZE) unsigned char mf_bootstrap[MF_BOOTSTRAP_SIZE];
static size_t mf_bootstrap_used;

/* Each block is preceded by its size, so realloc can move it. */
static void *mf_bootstrap_aligned(size_t align, size_t size)
{
	if (align < MF_BOOTSTRAP_ALIGN)
		align = MF_BOOTSTRAP_ALIGN;
	if (size > MF_BOOTSTRAP_SIZE || align > MF_PAGE_SIZE || (align & (align - 1))) {
		errno = ENOMEM;
		return NULL;
	}
	size_t old = __atomic_load_n(&mf_bootstrap_used, __ATOMIC_RELAXED), start, end;
	do {
		start = (old + MF_BOOTSTRAP_ALIGN + align - 1) & ~(align - 1);
		end = start + size;
		if (end > MF_BOOTSTRAP_SIZE) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&mf_bootstrap_used, &old, end, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	((size_t *)(mf_bootstrap + start))[-1] = size;
	return mf_bootstrap + start; /* static storage: already zero */
}

static void *mf_boot_malloc(size_t n)
{
	return mf_bootstrap_aligned(0, n);
}
static void *mf_boot_calloc(size_t n, size_t m)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return mf_bootstrap_aligned(0, total);
}
static void *mf_boot_realloc(void *p, size_t n)
{
	void *q = mf_bootstrap_aligned(0, n);
	if (q && p) {
		size_t old = ((size_t *)p)[-1];
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}
static int mf_boot_posix_memalign(void **out, size_t align, size_t n)
{
	if (align % sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	void *p = mf_bootstrap_aligned(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
static void *mf_boot_aligned_alloc(size_t align, size_t n)
{
	return mf_bootstrap_aligned(align, n);
}
static void *mf_boot_valloc(size_t n)
{
	return mf_bootstrap_aligned(MF_PAGE_SIZE, n);
}
static void mf_boot_free(void *p)
{
	(void)p;
}
static int mf_boot_dlclose(void *h)
{
	(void)h;
	return -1;
}

struct mf_real mf_real = {
    .alloc = {.malloc = mf_boot_malloc,
	      .calloc = mf_boot_calloc,
	      .realloc = mf_boot_realloc,
	      .posix_memalign = mf_boot_posix_memalign,
	      .aligned_alloc = mf_boot_aligned_alloc,
	      .memalign = mf_boot_aligned_alloc,
	      .valloc = mf_boot_valloc,
	      .pvalloc = mf_boot_valloc,
	      .free = mf_boot_free},
    .realloc_first = mf_boot_realloc,
    .dlclose = mf_boot_dlclose,
};

const unsigned char *mf_free_apart_lo = mf_bootstrap;
size_t mf_free_apart_span = MF_BOOTSTRAP_SIZE;

void mf_real_free_all_apart(void)
{
	__atomic_store_n(&mf_free_apart_lo, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&mf_free_apart_span, SIZE_MAX, __ATOMIC_RELAXED);
}

int mf_real_is_bootstrap(const void *p)
{
	return (const unsigned char *)p >= mf_bootstrap &&
	       (const unsigned char *)p < mf_bootstrap + MF_BOOTSTRAP_SIZE;
}

void *mf_real_move_bootstrap(void *p, size_t size)
{
	void *q = mf_real.alloc.malloc(size);
	if (q) {
		size_t old = ((size_t *)p)[-1];
		memcpy(q, p, old < size ? old : size);
	}
	return q;
}

/* Bootstrap blocks given back to free(), for mf_real_own to hand out again: libunwind's
 * per-thread block comes back at each thread's exit, and a program may start thousands of
 * threads. free() pushes onto a list without a lock (it runs in the program's threads, any of
 * which a signal handler may interrupt or an asynchronous cancellation end at any
 * instruction); mf_real_own, which runs with signals blocked and cancellation off, takes the
 * whole list under a spin lock into its own and hands blocks out from that. */
static void *mf_bootstrap_given; /* pushed by free(); each links to the next */
static void *mf_bootstrap_freed; /* mf_real_own's, under the lock */
static int mf_bootstrap_freed_lock;

size_t mf_real_bootstrap_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

void mf_real_free_bootstrap(void *p)
{
	if (((size_t *)p)[-1] < sizeof(void *))
		return;
	void *head = __atomic_load_n(&mf_bootstrap_given, __ATOMIC_RELAXED);
	do
		*(void **)p = head;
	while (!__atomic_compare_exchange_n(&mf_bootstrap_given, &head, p, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

/* A block given back that holds n bytes at alignment align, or NULL. */
static void *mf_bootstrap_reuse(size_t align, size_t n)
{
	void *p = NULL;
	mf_spin_take(&mf_bootstrap_freed_lock);
	void *given = __atomic_exchange_n(&mf_bootstrap_given, NULL, __ATOMIC_ACQUIRE);
	while (given) {
		void *next = *(void **)given;
		*(void **)given = mf_bootstrap_freed;
		mf_bootstrap_freed = given;
		given = next;
	}
	for (void **link = &mf_bootstrap_freed; *link; link = (void **)*link)
		if (((size_t *)*link)[-1] >= n && !((uintptr_t)*link & (align ? align - 1 : 0))) {
			p = *link;
			*link = *(void **)p;
			break;
		}
	mf_spin_give(&mf_bootstrap_freed_lock);
	return p;
}

void *mf_real_arena(size_t align, size_t n, int zero)
{
	void *p = mf_bootstrap_reuse(align, n);
	if (p) {
		if (zero)
			memset(p, 0, n);
		return p;
	}
	int saved = errno;
	p = mf_bootstrap_aligned(align, n); /* fresh static storage: zero */
	errno = saved;
	return p;
}

void *mf_real_own(size_t align, size_t n, int zero)
{
	void *p = mf_real_arena(align, n, zero);
	if (p)
		return p;
	if (align > MF_PAGE_SIZE) { /* (the bootstrap's limit: a page, for valloc) */
		errno = ENOMEM;
		return NULL;
	}
	if (align <= MF_BOOTSTRAP_ALIGN)
		return zero ? mf_real.alloc.calloc(1, n) : mf_real.alloc.malloc(n);
	return mf_real.alloc.posix_memalign(&p, align, n) ? NULL : p;
}

void *mf_real_own_realloc(void *old, size_t n)
{
	if (old && !mf_real_is_bootstrap(old))
		return mf_real.alloc.realloc(old, n);
	void *p = mf_boot_realloc(old, n);
	if (p)
		return p;
	return old ? mf_real_move_bootstrap(old, n) : mf_real.alloc.malloc(n);
}

/* The span of the profiler's own loaded segments, found once: whether a function is the
 * profiler's is whether it lies there. (The loader reserves an object's whole span and leaves
 * the gaps between its segments unmapped, so no other object lies in one. dladdr would say it
 * too, but it searches the symbols of the object an address lies in, and some programs export
 * tens of thousands: cc1's 28,000 cost 56,000 instructions a call.) */
static struct {
	uintptr_t lo, hi; /* (hi set last: 0 until lo is) */
} mf_real_self;

static int mf_real_find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0, me = (uintptr_t)mf_real_ours;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		uintptr_t at = info->dlpi_addr + p->p_vaddr;
		lo = at < lo ? at : lo;
		hi = at + p->p_memsz > hi ? at + p->p_memsz : hi;
	}
	if (me < lo || me >= hi)
		return 0;
	mf_real_self.lo = lo;
	__atomic_store_n(&mf_real_self.hi, hi, __ATOMIC_RELEASE);
	return 1;
}

int mf_real_ours(void *fn)
{
	if (!fn)
		return 0;
	uintptr_t hi = __atomic_load_n(&mf_real_self.hi, __ATOMIC_ACQUIRE);
	if (!hi) {
		mf_objects_iterate(mf_real_find_self, NULL);
		hi = __atomic_load_n(&mf_real_self.hi, __ATOMIC_ACQUIRE);
	}
	return (uintptr_t)fn >= mf_real_self.lo && (uintptr_t)fn < hi;
}

/* The first definition of name in the lookup order that is not the profiler's: what a call of
 * the program reaches, also where the profiler's is never reached (the program's own, or an
 * allocator's preloaded before it); else the next after the profiler. */
static void *mf_real_first(const char *name)
{
	void *fn = dlsym(RTLD_DEFAULT, name);
	return fn && !mf_real_ours(fn) ? fn : dlsym(RTLD_NEXT, name);
}

/* Every copy of the library carries this note, so that each finds the others in the loaded
 * objects: two paths to one file are loaded once, but a copy of it, or another build, is
 * loaded again, and each copy would count every call the program makes. */
#define MF_NOTE_NAME "malloc_freq"
static const struct {
	ElfW(Nhdr) head;
	char name[sizeof(MF_NOTE_NAME)];
} mf_real_note __attribute__((section(".note.malloc_freq"), aligned(4), used)) = {
    {sizeof(MF_NOTE_NAME), 0, 1}, MF_NOTE_NAME};

/* The first copy's note in the loaded objects, in the loader's order (that of the lookup). */
static int mf_real_find_note(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_NOTE)
			continue;
		const char *at = (const char *)(info->dlpi_addr + p->p_vaddr),
			   *end = at + p->p_memsz;
		while (at + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)at;
			const char *name = at + sizeof(*n);
			if (n->n_namesz == sizeof(MF_NOTE_NAME) && name + n->n_namesz <= end &&
			    !memcmp(name, MF_NOTE_NAME, sizeof(MF_NOTE_NAME))) {
				*(const void **)arg = n;
				return 1;
			}
			at = name + ((n->n_namesz + 3) & ~3u) + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

int mf_real_first_copy(void)
{
	const void *first = NULL;
	mf_objects_iterate(mf_real_find_note, &first);
	return !first || first == &mf_real_note;
}

/* The entry points the program defines itself: its calls to them go there, and the profiler
 * never sees them. Said once. (Those of an allocator preloaded before the profiler are
 * counted: see rebind.c.) Each is looked up in the program by name, through its hash table:
 * a program not built as PIE that takes a function's address has a canonical PLT entry, an
 * undefined symbol with a value, which dlsym finds; its calls go through the PLT to whatever
 * the loader bound, so it is no definition of the program's own. */
void mf_real_say_shadowed(void)
{
	static const char *const names[] = {
	    "malloc",	      "calloc",	       "realloc",  "reallocarray", "free",
	    "posix_memalign", "aligned_alloc", "memalign", "valloc",	   "pvalloc"};
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct mf_got_object program;
	if (mf_got_program(&program))
		return;
	int own[N], count = 0, last = 0;
	for (int i = 0; i < N; i++) {
		uintptr_t fn = (uintptr_t)dlsym(RTLD_DEFAULT, names[i]);
		const ElfW(Sym) *sym = fn && !mf_real_ours((void *)fn) && mf_got_holds(&program, fn)
					   ? mf_got_symbol(&program, names[i])
					   : NULL;
		own[i] = sym && sym->st_shndx != SHN_UNDEF;
		if (own[i])
			last = i, count++;
	}
	dlerror();
	char list[256];
	size_t at = 0;
	for (int i = 0; i < N; i++) {
		if (!own[i])
			continue;
		const char *sep = at == 0 ? "" : i == last ? " and " : ", ";
		int n = mf_format(list + at, sizeof(list) - at, "%s%s", sep, names[i]);
		at = n < 0 || at + (size_t)n >= sizeof(list) ? sizeof(list) - 1 : at + (size_t)n;
	}
	if (count)
		mf_log("the program defines %s itself: the profiler does not see %s calls", list,
		       count > 1 ? "their" : "its");
}

void mf_real_init_dl(void)
{
	if (mf_real.dlclose == mf_boot_dlclose) {
		void *fn = dlsym(RTLD_NEXT, "dlclose");
		if (fn)
			*(void **)&mf_real.dlclose = fn;
	}
	if (!mf_real.dl_iterate_phdr)
		*(void **)&mf_real.dl_iterate_phdr = dlsym(RTLD_NEXT, "dl_iterate_phdr");
}

int mf_real_init(void)
{
	struct mf_real r;
	/* Resolve everything first and publish after, so no entry point sees a half-set table. */
#define MF_RESOLVE(field, symbol)                                                                  \
	do {                                                                                       \
		*(void **)&r.field = dlsym(RTLD_NEXT, symbol);                                     \
		if (!r.field)                                                                      \
			r.field = mf_real.field;                                                   \
	} while (0)
	MF_RESOLVE(alloc.malloc, "malloc");
	MF_RESOLVE(alloc.calloc, "calloc");
	MF_RESOLVE(alloc.realloc, "realloc");
	MF_RESOLVE(alloc.posix_memalign, "posix_memalign");
	MF_RESOLVE(alloc.aligned_alloc, "aligned_alloc");
	MF_RESOLVE(alloc.memalign, "memalign");
	MF_RESOLVE(alloc.valloc, "valloc");
	MF_RESOLVE(alloc.pvalloc, "pvalloc");
	MF_RESOLVE(alloc.free, "free");
	MF_RESOLVE(dlclose, "dlclose");
	MF_RESOLVE(dl_iterate_phdr, "dl_iterate_phdr");
#undef MF_RESOLVE
	/* reallocarray is glibc's realloc with an overflow check; glibc's calls realloc as the
	 * program does, through the lookup order: a program's own realloc, or an allocator's
	 * preloaded before the profiler, gets the call (and has the block). */
	*(void **)&r.realloc_first = mf_real_first("realloc");
	if (!r.realloc_first)
		r.realloc_first = r.alloc.realloc;
	/* The program's dlclose and dl_iterate_phdr must work even if we do not record; and so
	 * must its set*uid and chroot. */
	mf_real.dlclose = r.dlclose;
	mf_real.dl_iterate_phdr = r.dl_iterate_phdr;
#define MF_RESOLVE_ANY(name) *(void **)&mf_real.name = r.name = dlsym(RTLD_NEXT, #name)
	MF_RESOLVE_ANY(setuid);
	MF_RESOLVE_ANY(seteuid);
	MF_RESOLVE_ANY(setreuid);
	MF_RESOLVE_ANY(setresuid);
	MF_RESOLVE_ANY(chroot);
	MF_RESOLVE_ANY(pthread_setcanceltype);
#undef MF_RESOLVE_ANY
	if (r.alloc.malloc == mf_boot_malloc || r.alloc.free == mf_boot_free ||
	    r.alloc.calloc == mf_boot_calloc || r.alloc.realloc == mf_boot_realloc ||
	    !r.dl_iterate_phdr) {
		mf_log("cannot find the next malloc/free with dlsym(RTLD_NEXT); not recording");
		return -1;
	}
	mf_real = r;
	return 0;
}
