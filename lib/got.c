/* An object's relocated references to named symbols (its GOT and PLT slots, and absolute
 * addresses in its data), as the loader resolved them, read from its dynamic section; and a
 * slot pointed elsewhere, through the read-only protection the loader gave it after relocating
 * (RELRO), which is put back. Runs inside malloc and the program's dlopen: no malloc, no stdio. */
#include "config.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"
#include "thread.h"

static uintptr_t mf_dyn_ptr(uintptr_t bias, ElfW(Addr) v)
{
	return v < bias ? bias + v : v; /* glibc relocates most in place */
}

int mf_got_object(const struct dl_phdr_info *info, struct mf_got_object *o)
{
	uintptr_t page = (uintptr_t)getpagesize();
	*o = (struct mf_got_object){.bias = info->dlpi_addr, .start = UINTPTR_MAX};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_DYNAMIC)
			o->dyn = (const ElfW(Dyn) *)lo;
		if (ph->p_type == PT_GNU_RELRO) { /* (as glibc protects it: whole pages only) */
			o->relro_lo = lo & ~(page - 1);
			o->relro_hi = hi & ~(page - 1);
		}
		if (ph->p_type == PT_LOAD && lo < o->start)
			o->start = lo;
		if (ph->p_type == PT_LOAD && hi > o->end)
			o->end = hi;
	}
	return o->dyn ? 0 : -1;
}

/* The tables of an object's dynamic section that are read here. */
struct mf_got_tables {
	const ElfW(Sym) * symtab;
	const char *strtab;
	const ElfW(Rela) * jmprel, *rela;
	size_t jmprel_size, rela_size;
	const uint32_t *gnu_hash, *sysv_hash;
};

static void mf_got_tables(const struct mf_got_object *o, struct mf_got_tables *t)
{
	*t = (struct mf_got_tables){0};
	for (const ElfW(Dyn) *d = o->dyn; d->d_tag != DT_NULL; d++) {
		const void *at = (const void *)mf_dyn_ptr(o->bias, d->d_un.d_ptr);
		switch (d->d_tag) {
		case DT_SYMTAB:
			t->symtab = at;
			break;
		case DT_STRTAB:
			t->strtab = at;
			break;
		case DT_JMPREL:
			t->jmprel = at;
			break;
		case DT_PLTRELSZ:
			t->jmprel_size = d->d_un.d_val;
			break;
		case DT_RELA:
			t->rela = at;
			break;
		case DT_RELASZ:
			t->rela_size = d->d_un.d_val;
			break;
		case DT_GNU_HASH:
			t->gnu_hash = at;
			break;
		case DT_HASH:
			t->sysv_hash = at;
			break;
		}
	}
}

/* The GNU hash of a name (DT_GNU_HASH), and the System V one (DT_HASH). */
static uint32_t mf_got_gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static uint32_t mf_got_sysv_hash(const char *s)
{
	uint32_t h = 0;
	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		h ^= (h >> 24) & 0xf0;
		h &= 0x0fffffff;
	}
	return h;
}

const ElfW(Sym) * mf_got_symbol(const struct mf_got_object *o, const char *name)
{
	struct mf_got_tables t;
	mf_got_tables(o, &t);
	if (!t.symtab || !t.strtab)
		return NULL;
	const uint32_t *gnu = t.gnu_hash, *sysv = t.sysv_hash;
	if (gnu) { /* buckets, first hashed symbol, bloom words, shift; bloom; buckets; chains */
		uint32_t buckets = gnu[0], first = gnu[1], h = mf_got_gnu_hash(name);
		const uint32_t *bucket = gnu + 4 + gnu[2] * (sizeof(ElfW(Addr)) / 4),
			       *chain = bucket + buckets;
		uint32_t i = buckets ? bucket[h % buckets] : 0;
		for (; i && i >= first; i++) {
			if ((chain[i - first] | 1) == (h | 1) &&
			    !strcmp(t.strtab + t.symtab[i].st_name, name))
				return &t.symtab[i];
			if (chain[i - first] & 1) /* (the last of its bucket) */
				break;
		}
		return NULL;
	}
	if (sysv && sysv[0]) { /* buckets, symbols; buckets; chains */
		const uint32_t *bucket = sysv + 2, *chain = bucket + sysv[0];
		for (uint32_t i = bucket[mf_got_sysv_hash(name) % sysv[0]]; i && i < sysv[1];
		     i = chain[i])
			if (!strcmp(t.strtab + t.symtab[i].st_name, name))
				return &t.symtab[i];
	}
	return NULL;
}

/* The first object dl_iterate_phdr shows, the program, as *(struct mf_got_object *)arg. */
static int mf_got_first(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	return mf_got_object(info, arg) ? -1 : 1;
}

int mf_got_program(struct mf_got_object *o)
{
	return mf_objects_iterate(mf_got_first, o) == 1 ? 0 : -1;
}

/* fn over one table of relocations. */
static int mf_got_table(const struct mf_got_object *o, const ElfW(Rela) * rel, size_t size,
			const ElfW(Sym) * symtab, const char *strtab, mf_got_fn *fn, void *arg)
{
	for (size_t i = 0; i < size / sizeof(*rel); i++) {
		unsigned type = (unsigned)ELF64_R_TYPE(rel[i].r_info);
		size_t sym = ELF64_R_SYM(rel[i].r_info);
		if ((type != MF_ARCH_R_JUMP_SLOT && type != MF_ARCH_R_GLOB_DAT &&
		     type != MF_ARCH_R_ABS64) ||
		    !sym || rel[i].r_addend)
			continue;
		int r = fn((void **)(o->bias + rel[i].r_offset), strtab + symtab[sym].st_name,
			   &symtab[sym], type, arg);
		if (r)
			return r;
	}
	return 0;
}

int mf_got_each(const struct mf_got_object *o, mf_got_fn *fn, void *arg)
{
	struct mf_got_tables t;
	mf_got_tables(o, &t);
	if (!t.symtab || !t.strtab)
		return -1;
	int r =
	    t.jmprel ? mf_got_table(o, t.jmprel, t.jmprel_size, t.symtab, t.strtab, fn, arg) : 0;
	return r	? r
	       : t.rela ? mf_got_table(o, t.rela, t.rela_size, t.symtab, t.strtab, fn, arg)
			: 0;
}

/* Writers take turns: one's page made read-only again under another's write would fault. */
static pthread_mutex_t mf_got_lock = PTHREAD_MUTEX_INITIALIZER;

int mf_got_write(const struct mf_got_object *o, void **slot, void *value)
{
	uintptr_t size = (uintptr_t)getpagesize(), page = (uintptr_t)slot & ~(size - 1);
	int relro = page >= o->relro_lo && page < o->relro_hi, r = 0, held = mf_tls.fork_held;
	mf_fork_hold(); /* (a child must not inherit the lock) */
	pthread_mutex_lock(&mf_got_lock);
	if (relro && mprotect((void *)page, size, PROT_READ | PROT_WRITE))
		r = -1;
	else
		__atomic_store_n(slot, value, __ATOMIC_RELEASE);
	if (relro && !r && mprotect((void *)page, size, PROT_READ))
		r = -1;
	pthread_mutex_unlock(&mf_got_lock);
	if (!held)
		mf_fork_release();
	return r;
}
