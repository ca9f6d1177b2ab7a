/* The loader's other namespaces (dlmopen): their objects, which dl_iterate_phdr never shows the
 * profiler (it reports its caller's namespace only), found through the debugger's list of
 * namespaces (_r_debug, glibc 2.35) and read with the loader's lock held (inside a callback of
 * dl_iterate_phdr), as dl_iterate_phdr reads its own. An older glibc has neither that list nor
 * _dl_find_object: both are looked for at run time (the latter in objects.c), and without them
 * no other namespace is seen (the base namespace's objects are then found in objects.c's
 * table). Runs inside malloc: no malloc, no stdio. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"

/* glibc's r_debug_extended (2.35), declared here for older headers: _r_debug is the base
 * namespace's, and from r_version 2 on it is followed by the next namespace's. */
struct mf_r_debug {
	struct r_debug base;
	struct mf_r_debug *next;
};

/* The namespace after r, or NULL. */
static const struct mf_r_debug *mf_namespaces_next(const struct mf_r_debug *r)
{
	if (r == (const struct mf_r_debug *)&_r_debug &&
	    __atomic_load_n(&_r_debug.r_version, __ATOMIC_ACQUIRE) < 2)
		return NULL;
	struct mf_r_debug *const *next = &r->next; /* (beyond what link.h declares) */
	__asm__("" : "+r"(next));
	return __atomic_load_n(next, __ATOMIC_ACQUIRE);
}

int mf_namespaces_listed(void)
{
	return __atomic_load_n(&_r_debug.r_version, __ATOMIC_ACQUIRE) >= 2 &&
	       mf_objects_loader_knows(); /* (else their objects' mappings are not known) */
}

int mf_namespaces_any(void)
{
	return mf_namespaces_next((const struct mf_r_debug *)&_r_debug) != NULL;
}

int mf_namespaces_heads(struct link_map **heads, int max)
{
	int n = 0;
	for (const struct mf_r_debug *r = (const struct mf_r_debug *)&_r_debug; r && n < max;
	     r = mf_namespaces_next(r))
		heads[n++] = __atomic_load_n(&r->base.r_map, __ATOMIC_ACQUIRE);
	return n;
}

int mf_namespaces_mapped(const void *at, const void **start, const void **end)
{
	struct mf_object obj;
	if (mf_objects_loader_knows()) {
		if (mf_objects_find((uintptr_t)at, &obj))
			return -1;
	} else if (mf_objects_find_current((uintptr_t)at, &obj)) {
		return 1; /* (the table's are the base namespace's: another's may hold it) */
	}
	*start = (const void *)obj.start;
	*end = (const void *)obj.end;
	return 0;
}

/* The program headers at ph if they are l's (its dynamic section is where l has it), else NULL. */
static const ElfW(Phdr) *
    mf_namespaces_own(const struct link_map *l, const ElfW(Phdr) * ph, uintptr_t phnum)
{
	for (uintptr_t i = 0; ph && i < phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC && l->l_addr + ph[i].p_vaddr == (uintptr_t)l->l_ld)
			return ph;
	return NULL;
}

/* l's program headers, if the loaded span that holds at starts with l's ELF header (the first
 * loaded segment does, and its program headers follow in it, as the linker lays out every
 * object); else NULL. */
static const ElfW(Phdr) * mf_namespaces_header(const struct link_map *l, const void *at, int *phnum)
{
	const void *start, *end;
	if (mf_namespaces_mapped(at, &start, &end))
		return NULL;
	const ElfW(Ehdr) *e = start;
	uintptr_t size = (uintptr_t)end - (uintptr_t)start;
	if (size < sizeof(*e) || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
	    e->e_phentsize != sizeof(ElfW(Phdr)) ||
	    e->e_phoff + (uintptr_t)e->e_phnum * sizeof(ElfW(Phdr)) > size)
		return NULL;
	*phnum = e->e_phnum;
	return mf_namespaces_own(l, (const ElfW(Phdr) *)((const char *)e + e->e_phoff), *phnum);
}

int mf_namespaces_info(const struct link_map *l, struct dl_phdr_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!l->l_ld)
		return -1;
	/* The span of the dynamic section is the whole object where its segments lie side by
	 * side. A program whose segments are aligned to larger pages than the system's (arm64's
	 * 64 KiB on 4 KiB pages) has gaps between them, and the loader then knows each segment
	 * apart: its first starts at the load bias (a PIE, as the loader itself), and the
	 * kernel gave the loader the program's headers (AT_PHDR: also one not built as PIE). */
	int phnum = 0;
	const ElfW(Phdr) *ph = mf_namespaces_header(l, l->l_ld, &phnum);
	if (!ph && l->l_addr)
		ph = mf_namespaces_header(l, (const void *)l->l_addr, &phnum);
	if (!ph) {
		phnum = (int)getauxval(AT_PHNUM);
		ph = mf_namespaces_own(l, (const ElfW(Phdr) *)getauxval(AT_PHDR), (uintptr_t)phnum);
	}
	if (!ph)
		return -1;
	info->dlpi_addr = l->l_addr;
	info->dlpi_name = l->l_name;
	info->dlpi_phdr = ph;
	info->dlpi_phnum = (ElfW(Half))phnum;
	return 0;
}

/* The objects of every namespace but the base one, to fn as dl_iterate_phdr gives them (but
 * the thread-local storage's fields, left 0); stops at fn's first nonzero answer. */
struct mf_namespaces_walk {
	int (*fn)(struct dl_phdr_info *, size_t, void *);
	void *arg;
	int ret;
};

static int mf_namespaces_visit(struct dl_phdr_info *base, size_t size, void *arg)
{
	(void)size;
	struct mf_namespaces_walk *w = arg;
	struct link_map *heads[MF_NAMESPACES_MAX];
	int n = mf_namespaces_heads(heads, MF_NAMESPACES_MAX);
	for (int i = 1; i < n && !w->ret; i++)
		for (const struct link_map *l = heads[i]; l && !w->ret; l = l->l_next) {
			struct dl_phdr_info info;
			if (mf_namespaces_info(l, &info))
				continue;
			info.dlpi_adds = base->dlpi_adds;
			info.dlpi_subs = base->dlpi_subs;
			w->ret = w->fn(&info, sizeof(info), w->arg);
		}
	return 1; /* (the base namespace's first object only: the lock is held meanwhile) */
}

int mf_objects_each(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	int r = mf_objects_iterate(fn, arg);
	if (r || !mf_namespaces_any())
		return r;
	struct mf_namespaces_walk w = {fn, arg, 0};
	mf_objects_iterate(mf_namespaces_visit, &w);
	return w.ret;
}

unsigned long long mf_namespaces_loaded(void)
{
	struct link_map *heads[MF_NAMESPACES_MAX];
	int n = mf_namespaces_heads(heads, MF_NAMESPACES_MAX);
	unsigned long long count = 0;
	for (int i = 0; i < n; i++)
		for (const struct link_map *l = heads[i]; l; l = l->l_next)
			count++;
	return count;
}
