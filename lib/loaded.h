/* The loaded objects, as the profiler knows them: the module map (modules.c), the object at
 * an address (objects.c), the loader's lock (loader.c), the loader's own allocations
 * (loader_alloc.c), an object's GOT and PLT slots (got.c), the loader's other namespaces
 * (namespaces.c), and the objects whose allocation calls are rebound to the entry points
 * (rebind.c). For the files that resolve addresses, watch the loader or rebind slots. */
#ifndef MF_LOADED_H
#define MF_LOADED_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "mf_internal.h"

/* modules.c: the process's module map, in memory and in the file `modules`. */
void mf_modules_init(void);
/* The program's path as found at start (from /proc/self/exe, or where there is no /proc from
 * the path it was executed by); "" if neither was known, or before mf_modules_init. */
const char *mf_modules_main_path(void);
/* Maps pc to (module index, rel_pc); MF_MODULE_NONE when nothing maps it. Without a lock
 * unless pc lies in an object loaded since the map was last made: then it takes the fork lock
 * (for good: the entry point gives it back), rescans the loaded objects and rewrites the
 * file. */
uint32_t mf_modules_resolve(uintptr_t pc, uint64_t *rel_pc);
/* The same without a lock or a call, if pc lies in the module this thread resolved last
 * (then 1), else 0. */
int mf_modules_resolve_last(uintptr_t pc, uint32_t *module, uint64_t *rel_pc);
/* Rescans the loaded objects (after dlclose) and rewrites the file. */
void mf_modules_refresh(void);
/* Writes the map into the process directory (after it was created). */
void mf_modules_write(void);
int mf_modules_is_self(uintptr_t pc); /* pc lies in libmalloc_freq itself */
/* The address range of the module that holds pc (all its PT_LOAD segments); 0, or -1 if none
 * does. As mf_modules_resolve. */
int mf_modules_range(uintptr_t pc, uintptr_t *start, uintptr_t *end);
/* A hash of the build-id of the module that holds pc (0: none, it has no build-id or no unwind
 * table, or the loader has another object there now), and pc's offset from the module's load
 * bias in *rel_pc. As mf_modules_resolve. */
uint64_t mf_modules_identity(uintptr_t pc, uint64_t *rel_pc);
/* The main program's build-id in hex (out: 2 * MF_BUILD_ID_LEN + 1 bytes); 0, or -1 if none. */
int mf_modules_main_build_id(char *out);
extern volatile unsigned mf_modules_generation; /* bumped when an object is unloaded */
void mf_modules_prefork(void);
void mf_modules_postfork(void);
void mf_modules_reset(void); /* in a child whose parent's threads may have held the lock */

/* loader_alloc.c: where the loader's own allocator pointers lead not to the profiler's entry
 * points (a program's own malloc, an allocator preloaded before the profiler), they are led
 * through forwarders that serve the profiler's own allocations (mf_tls.own) from the bootstrap
 * arena: the loader's work for the profiler (loading libunwind, the threads it starts) stays
 * out of the program's allocator. Once, at start. */
void mf_loader_alloc_take(void);

/* objects.c: the loaded object at an address, without a lock: glibc's _dl_find_object where
 * it has one, else a table made from dl_iterate_phdr (MALLOC_FREQ_FIND_OBJECT=table forces
 * it). Its whole address range, and its .eh_frame_hdr (0 if none). */
struct mf_object {
	uintptr_t start, end, eh_frame;
};
void mf_objects_init(void); /* after mf_loader_init */
/* 0 and *out: the object loaded at pc; 1: none; -1: cannot tell now. No lock, no system call;
 * the table is as last made (at start, or by mf_objects_find_current). */
int mf_objects_find(uintptr_t pc, struct mf_object *out);
/* The same, as the loader has it now: the table is made again first if the loader loaded or
 * unloaded anything since (asking takes the loader's lock, as dl_iterate_phdr does). */
int mf_objects_find_current(uintptr_t pc, struct mf_object *out);
/* Do the answers come from the loader, which knows every namespace's objects (the table knows
 * the base namespace's only)? Not without _dl_find_object, or with MALLOC_FREQ_FIND_OBJECT=table.
 */
int mf_objects_loader_knows(void);
/* The loader's counters of objects loaded and unloaded, as dl_iterate_phdr gives them (which
 * takes the loader's lock): what changed since they were last read. */
void mf_objects_counters(unsigned long long c[2]);

/* loader.c: the dynamic loader's write lock, as a forked child inherited it, and as the
 * calling thread holds it. */
void mf_loader_init(void);
void mf_loader_postfork_child(void); /* sets mf_loader_stuck */
/* Does the calling thread hold the loader's write lock (inside a program's dl_iterate_phdr
 * callback, or after leaving one by longjmp)? sp: the program's stack pointer at the call
 * (where the lock could not be found, a call below the program's dl_iterate_phdr is taken to
 * be in its callback). Then another thread may wait for that lock while it holds libunwind's
 * or the fork lock for reading: the thread's slow steps use neither libunwind nor wait for a
 * fork (mf_tls.loader_held). Without a lock or a system call but the first time in a thread,
 * and only while some thread holds the lock. */
int mf_loader_held(uintptr_t sp);
/* The program's dl_iterate_phdr, by real (the lock held meanwhile is watched). */
typedef int mf_loader_iterate_fn(int (*)(struct dl_phdr_info *, size_t, void *), void *);
int mf_loader_iterate(mf_loader_iterate_fn *real, int (*cb)(struct dl_phdr_info *, size_t, void *),
		      void *arg);
/* In a child forked while another thread held the loader's lock: dl_iterate_phdr (and so
 * unwinding, and looking at the loaded objects) would wait for ever. */
extern int mf_loader_stuck;

/* got.c: an object's relocated references to named symbols: its GOT and PLT slots
 * (MF_ARCH_R_GLOB_DAT, MF_ARCH_R_JUMP_SLOT) and its absolute addresses (MF_ARCH_R_ABS64, addend
 * 0; lib/arch/). */
struct mf_got_object {
	uintptr_t bias;
	const ElfW(Dyn) * dyn;
	uintptr_t start, end;	      /* its loaded segments */
	uintptr_t relro_lo, relro_hi; /* the pages the loader made read-only after relocating */
};
int mf_got_object(const struct dl_phdr_info *info, struct mf_got_object *o); /* 0, or -1 */
/* The program's (the first object the loader shows): 0, or -1. Its segments say whether an
 * address is the program's without dladdr, which searches every symbol of the object (a
 * program that exports 29,000, as gcc's cc1 does, took 550,000 instructions a lookup). */
int mf_got_program(struct mf_got_object *o);
/* Does addr lie in the object's loaded segments? */
static inline int mf_got_holds(const struct mf_got_object *o, uintptr_t addr)
{
	return addr >= o->start && addr < o->end;
}
/* fn(slot, name, sym, type, arg) for each such reference, until fn returns nonzero (that is
 * returned); -1 if the object's tables cannot be found. */
typedef int mf_got_fn(void **slot, const char *name, const ElfW(Sym) * sym, unsigned type,
		      void *arg);
int mf_got_each(const struct mf_got_object *o, mf_got_fn *fn, void *arg);
/* The object's dynamic symbol of that name, found through its hash table (not by dladdr:
 * mf_got_program); NULL if it has none. Undefined ones too, with their st_shndx SHN_UNDEF. */
const ElfW(Sym) * mf_got_symbol(const struct mf_got_object *o, const char *name);
/* *slot = value, through the read-only protection of RELRO (put back after); 0, or -1 (not
 * written). Not from a dl_iterate_phdr callback: it takes the fork lock. */
int mf_got_write(const struct mf_got_object *o, void **slot, void *value);

/* namespaces.c: the loader's namespaces besides the base one (dlmopen), whose objects
 * dl_iterate_phdr shows only to code loaded there. */
#define MF_NAMESPACES_MAX 16	/* glibc's DL_NNS */
int mf_namespaces_any(void);	/* another namespace was made (no lock) */
int mf_namespaces_listed(void); /* glibc lists its namespaces (2.35 on): else none is seen */
/* The mapping of the object that holds address at (any namespace's; no lock): 0; -1 when no
 * object holds it; 1 when this glibc cannot tell (no _dl_find_object: the base namespace's
 * objects are found in objects.c's table, brought up to date under the loader's lock). */
int mf_namespaces_mapped(const void *at, const void **start, const void **end);
/* With the loader's lock held (in a dl_iterate_phdr callback): each namespace's first object
 * (NULL: an emptied one), the base namespace's first; at most max; returns how many. */
int mf_namespaces_heads(struct link_map **heads, int max);
/* With the loader's lock held: object l as dl_iterate_phdr reports one (its program headers
 * read from its ELF header, or the program's from AT_PHDR; its thread-local storage left
 * out); 0, or -1. */
int mf_namespaces_info(const struct link_map *l, struct dl_phdr_info *info);
/* With the loader's lock held: how many objects all namespaces hold. */
unsigned long long mf_namespaces_loaded(void);
/* As mf_objects_iterate, over the objects of every namespace, the base one's first. */
int mf_objects_each(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg);

/* rebind.c: objects that reach an allocator past the entry points (a library opened with
 * RTLD_DEEPBIND, every object of a namespace made by dlmopen) have their GOT slots for it
 * pointed at entry points that forward to it, once the loader has loaded them. */
void mf_rebind_init(void); /* at start: watches the loader's dlopen */
/* malloc_freq --detach (attach.c): the loader's _dl_open is no longer watched (objects loaded
 * from now on are left alone), and the slots pointed at the entry points for the allocator
 * preloaded first (the one the library found loaded late) lead to it again, but in the objects
 * mf_attach_skip names. 0, or -1 (some slot could not be read or written). */
int mf_rebind_undo(void);
/* The frame of a dlopen of the calling thread's that is watched now (its slots rebound once the
 * loader returns), or 0 (or, after the loader's error, the last, left by its longjmp). */
extern MF_TLS uintptr_t mf_rebind_watched;
/* interpose.c: the entry points by their own addresses: malloc, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, free. */
#define MF_ENTRY_OWN_COUNT 10
extern void *const mf_entry_own[MF_ENTRY_OWN_COUNT];

/* attach.c: the library loaded into a running process, not preloaded (malloc_freq --attach);
 * mf_attach_start at the constructor's end, after libunwind is loaded. */
extern int mf_attached;
extern int mf_detached; /* malloc_freq_detach was called: every call passes straight on */
void mf_attach_start(void);
int mf_attach_skip(uintptr_t start); /* an object loaded with the library, from start */
int malloc_freq_detach(void);

#endif
