/* Offline symbolization for mf_print: (module file, build-id, relative pc) -> function,
 * file:line and inlined frames, read with elfutils libdwfl; C++ and Rust names demangled
 * with libiberty. Never runs inside the profiled process. Not thread-safe. */
#ifndef MF_SYMBOLIZE_H
#define MF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct mf_sym_frame {
	const char *function; /* demangled name; never NULL: "BASENAME+0xOFF" when unknown */
	const char *file;     /* source file as DWARF names it, or NULL */
	int line;	      /* 0 when unknown */
	int column;	      /* 0 when unknown */
	int inlined;	      /* 1: inlined into the frame that follows in the array */
	int lang;	      /* enum mf_lang: how function was mangled */
	int named;	      /* 0: function is that "BASENAME+0xOFF" (no symbol names it) */
};

struct mf_symbolizer;
struct mf_sym_module;

/* Whether a module's path names the kernel's vdso: "[vdso]", or the name the loader gives it
 * (linux-vdso.so.1, linux-gate.so.1 and the like: no file has it). Its frames are read from
 * mf_print's own vdso where the build-ids agree, else named "[vdso]+0xOFF", and nothing is
 * said of it. */
static inline int mf_sym_is_vdso(const char *path)
{
	return !strcmp(path, "[vdso]") ||
	       (!strchr(path, '/') &&
		(!strncmp(path, "linux-vdso", 10) || !strncmp(path, "linux-gate", 10)));
}

/* Returns NULL only when out of memory. */
struct mf_symbolizer *mf_sym_new(void);
void mf_sym_free(struct mf_symbolizer *sym);

/* The session of the module file at path, opened on first use ("" and "[...]" names are
 * never opened: their frames are named "[name]+0xOFF"). NULL only when out of memory. */
struct mf_sym_module *mf_sym_module_get(struct mf_symbolizer *sym, const char *path);

/*
 * The frames at rel_pc (an ELF virtual address of module m), innermost first: the inlined
 * functions, then the function that contains them. is_return_address: rel_pc is a return
 * address, so the call instruction before it is looked up (rel_pc - 1). build_id (may be NULL
 * when build_id_len is 0) is what the profiled process saw; a file on disk with another
 * build-id is not used (the frame falls back to "path+0xOFF") and mf_sym_warnings() says so
 * once per module. Returns the number of frames (>= 1) and sets *out to an array that stays
 * valid until the next lookup; its strings stay valid until mf_sym_free(). Nothing is cached:
 * look each address up once.
 */
int mf_sym_lookup_in(struct mf_symbolizer *sym, struct mf_sym_module *m, const uint8_t *build_id,
		     size_t build_id_len, uint64_t rel_pc, int is_return_address,
		     const struct mf_sym_frame **out);
/* Is rel_pc, in module m, the first instruction of a signal return (the address a signal
 * handler returns to, which the kernel put where its return address would be)? Then it is not
 * a return address, and neither is the pc of the frame below it: the instruction the signal
 * interrupted. Read from the file when its build-id (if given) is the run's; else false. */
bool mf_sym_is_sigreturn(struct mf_symbolizer *sym, struct mf_sym_module *m,
			 const uint8_t *build_id, size_t build_id_len, uint64_t rel_pc);
/* For a module without a build-id: the extent of its loaded segments in the profiled process,
 * and when the last process that had it ended (CLOCK_REALTIME ns; 0 when not known). A file
 * on disk whose segments span otherwise, or written after that, was changed since the run
 * (rebuilt): it is not used, as for another build-id, and said once. */
void mf_sym_module_expect(struct mf_symbolizer *sym, struct mf_sym_module *m, uint64_t span,
			  uint64_t ended_ns);
/* The same by the module's path. */
int mf_sym_lookup(struct mf_symbolizer *sym, const char *path, const uint8_t *build_id,
		  size_t build_id_len, uint64_t rel_pc, int is_return_address,
		  const struct mf_sym_frame **out);

enum {
	MF_SYM_WARN_CANNOT_OPEN,   /* the module's file cannot be opened */
	MF_SYM_WARN_BUILD_ID,	   /* the file is not the one the process had */
	MF_SYM_WARN_NO_DEBUG_INFO, /* no debug info found: functions only, no file:line */
	MF_SYM_WARN_SPLIT_DWARF,   /* its split units not found: functions only, no file:line */
};
/* Calls fn once for each warning collected so far, in order (its kind, the module's path and a
 * message naming it), then forgets them. */
void mf_sym_warnings(struct mf_symbolizer *sym,
		     void (*fn)(int kind, const char *path, const char *msg, void *arg), void *arg);

#endif
