/* An object's relocated references to named symbols (its GOT and PLT slots, and absolute
 * addresses in its data), as the loader resolved them, read from its dynamic section; and a
 * slot pointed elsewhere, through the read-only protection the loader gave it after relocating
 * (RELRO), which is put back. Runs inside malloc and the program's dlopen: no malloc, no stdio. */
#include "config.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
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
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_size = 0, rela_size = 0;
	for (const ElfW(Dyn) *d = o->dyn; d->d_tag != DT_NULL; d++)
		switch (d->d_tag) {
		case DT_SYMTAB:
			symtab = (const void *)mf_dyn_ptr(o->bias, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const void *)mf_dyn_ptr(o->bias, d->d_un.d_ptr);
			break;
		case DT_JMPREL:
			jmprel = (const void *)mf_dyn_ptr(o->bias, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			jmprel_size = d->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const void *)mf_dyn_ptr(o->bias, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			rela_size = d->d_un.d_val;
			break;
		}
	if (!symtab || !strtab)
		return -1;
	int r = jmprel ? mf_got_table(o, jmprel, jmprel_size, symtab, strtab, fn, arg) : 0;
	return r ? r : rela ? mf_got_table(o, rela, rela_size, symtab, strtab, fn, arg) : 0;
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
