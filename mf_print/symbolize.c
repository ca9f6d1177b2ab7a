/* Offline symbolization: (module file, build-id, rel_pc) -> function, file:line and inlined frames.
 * One libdwfl session per module file, opened on first use and kept with every result until
 * mf_sym_free(); all returned strings are interned in the symbolizer. C++ and Rust names are
 * demangled with libiberty. */
#define _GNU_SOURCE /* vasprintf */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
/* A failed add leaves the element's hh.tbl NULL instead of exiting. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "array.h"
#include "elfsym.h"
#include "inlines.h"
#include "ranges.h"
#include "names.h"
#include "symbolize.h"

struct mf_sym_str {
	UT_hash_handle hh;
	char s[];
};

struct mf_sym_module {
	UT_hash_handle hh;
	char *path;	  /* key */
	const char *base; /* interned file name without directories, for fallback names */
	Dwfl *dwfl;	  /* NULL: the file cannot be used at all */
	Dwfl_Module *mod;
	const unsigned char *build_id; /* owned by dwfl */
	int build_id_len;
	bool dwarf_checked;
	bool warned_build_id;
	bool warned_split; /* its split units (-gsplit-dwarf) were not found */
	bool symtab_built;
	struct mf_elfsym *symtab;   /* sorted, made on first use */
	struct mf_inlines *inlines; /* each unit's subprograms, indexed on first use */
	bool units_built;
	bool file_checked, stale; /* stale: its file is not the one the process loaded */
	bool vdso;		  /* the kernel's vdso: read from this process's, said nothing of */
	struct mf_ranges units;	  /* by their code, made when .debug_aranges names no unit */
	bool code_built;
	struct mf_code code; /* its executable sections, in DWARF addresses; made on first use */
	int file_fd;	     /* its file for a few bytes of code, plus 1; 0: not opened; -1: none */
};

struct mf_sym_warning {
	int kind; /* MF_SYM_WARN_* */
	char *path, *msg;
};

struct mf_symbolizer {
	struct mf_sym_str *strs;
	struct mf_sym_module *mods;
	struct mf_sym_frame *frames; /* the last lookup's */
	int cap_frames;
	struct mf_sym_warning *warnings;
	size_t nwarnings;
	size_t cap_warnings;
};

/* Growing frame list while one address is resolved. */
struct mf_sym_vec {
	struct mf_sym_frame *v;
	int n;
	int cap;
	bool failed;
};

static const Dwfl_Callbacks mf_sym_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* Returned when not even a fallback frame could be allocated. */
static const struct mf_sym_frame mf_sym_oom_frame = {.function = "[out of memory]"};

static const char *mf_sym_intern(struct mf_symbolizer *sym, const char *s)
{
	struct mf_sym_str *e;
	size_t len;

	if (!s)
		return NULL;
	len = strlen(s);
	HASH_FIND(hh, sym->strs, s, len, e);
	if (e)
		return e->s;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->s, s, len + 1);
	HASH_ADD_KEYPTR(hh, sym->strs, e->s, len, e);
	if (!e->hh.tbl) {
		free(e);
		return NULL;
	}
	return e->s;
}

__attribute__((format(printf, 1, 0))) static char *mf_sym_vasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

__attribute__((format(printf, 2, 3))) static const char *
mf_sym_intern_fmt(struct mf_symbolizer *sym, const char *fmt, ...)
{
	const char *r;
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = mf_sym_vasprintf(fmt, ap);
	va_end(ap);
	if (!s)
		return NULL;
	r = mf_sym_intern(sym, s);
	free(s);
	return r;
}

__attribute__((format(printf, 4, 5))) static void
mf_sym_warn(struct mf_symbolizer *sym, int kind, const char *path, const char *fmt, ...)
{
	struct mf_sym_warning *w;
	va_list ap;

	if (sym->nwarnings == sym->cap_warnings) {
		size_t cap = sym->cap_warnings ? sym->cap_warnings * 2 : 8;

		w = realloc(sym->warnings, cap * sizeof(*w));
		if (!w)
			return;
		sym->warnings = w;
		sym->cap_warnings = cap;
	}
	w = &sym->warnings[sym->nwarnings];
	w->kind = kind;
	w->path = strdup(path);
	va_start(ap, fmt);
	w->msg = mf_sym_vasprintf(fmt, ap);
	va_end(ap);
	if (w->path && w->msg)
		sym->nwarnings++;
	else {
		free(w->path);
		free(w->msg);
	}
}

/* Demangled if mangled, interned either way; *lang says how it was mangled. */
static const char *mf_sym_name(struct mf_symbolizer *sym, const char *name, int *lang)
{
	enum mf_lang l;
	const char *r;
	char *d;

	*lang = MF_LANG_C;
	if (!name || !*name)
		return NULL;
	d = mf_name_demangle(name, &l);
	*lang = l;
	if (!d)
		return mf_sym_intern(sym, name);
	r = mf_sym_intern(sym, d);
	free(d);
	return r;
}

struct mf_symbolizer *mf_sym_new(void)
{
	return calloc(1, sizeof(struct mf_symbolizer));
}

void mf_sym_free(struct mf_symbolizer *sym)
{
	struct mf_sym_module *m, *mtmp;
	struct mf_sym_str *s, *stmp;
	size_t i;

	if (!sym)
		return;
	HASH_ITER (hh, sym->mods, m, mtmp) {
		HASH_DEL(sym->mods, m);
		mf_elfsym_free(m->symtab);
		mf_inlines_free(m->inlines);
		mf_ranges_free(&m->units);
		free(m->code.v);
		if (m->file_fd > 0)
			close(m->file_fd - 1);
		if (m->dwfl)
			dwfl_end(m->dwfl);
		free(m->path);
		free(m);
	}
	HASH_ITER (hh, sym->strs, s, stmp) {
		HASH_DEL(sym->strs, s);
		free(s);
	}
	for (i = 0; i < sym->nwarnings; i++) {
		free(sym->warnings[i].path);
		free(sym->warnings[i].msg);
	}
	free(sym->warnings);
	free(sym->frames);
	free(sym);
}

void mf_sym_warnings(struct mf_symbolizer *sym,
		     void (*fn)(int kind, const char *path, const char *msg, void *arg), void *arg)
{
	size_t i;

	for (i = 0; i < sym->nwarnings; i++) {
		fn(sym->warnings[i].kind, sym->warnings[i].path, sym->warnings[i].msg, arg);
		free(sym->warnings[i].path);
		free(sym->warnings[i].msg);
	}
	sym->nwarnings = 0;
}

/* This process's vdso image as a file (a memfd), for libdwfl to read: the kernel maps one
 * image into every process, so the profiled process's is this one where their build-ids
 * agree (mf_sym_build_id_ok checks). -1 when there is none. */
static int mf_sym_vdso_fd(void)
{
	unsigned long at = getauxval(AT_SYSINFO_EHDR), lo, hi, size = 0;
	char line[512];
	FILE *maps = at ? fopen("/proc/self/maps", "re") : NULL;
	while (maps && !size && fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == at)
			size = hi - lo;
	if (maps)
		fclose(maps);
	int fd = size ? memfd_create("vdso", MFD_CLOEXEC) : -1;
	if (fd >= 0 && write(fd, (const void *)at, size) != (ssize_t)size) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void mf_sym_open(struct mf_symbolizer *sym, struct mf_sym_module *m)
{
	GElf_Addr vaddr;
	Dwfl *dwfl;
	int fd = -1;

	if (m->vdso && (fd = mf_sym_vdso_fd()) < 0)
		return;
	/* No file to open: anonymous code, or a pseudo-module like "[heap]". */
	if (!m->vdso && (!m->path[0] || m->path[0] == '['))
		return;
	/* A FIFO or device under a module's name would block or feed us garbage. */
	struct stat st;
	if (!m->vdso && stat(m->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		mf_sym_warn(sym, MF_SYM_WARN_CANNOT_OPEN, m->path,
			    "%s: cannot open: not a regular file", m->path);
		return;
	}

	dwfl = dwfl_begin(&mf_sym_callbacks);
	if (!dwfl) {
		if (fd >= 0)
			close(fd);
		else
			mf_sym_warn(sym, MF_SYM_WARN_CANNOT_OPEN, m->path, "%s: cannot open: %s",
				    m->path, dwfl_errmsg(-1));
		return;
	}
	dwfl_report_begin(dwfl);
	/*
	 * add_p_vaddr = true gives a bias of 0, so Dwfl addresses are the ELF virtual addresses
	 * (rel_pc) even for an ET_DYN whose first PT_LOAD is not at 0; ET_EXEC ignores it.
	 */
	m->mod = dwfl_report_elf(dwfl, m->path, m->path, fd, 0, true); /* (fd: taken) */
	if (!m->mod) {
		if (fd >= 0)
			close(fd);
		else
			mf_sym_warn(sym, MF_SYM_WARN_CANNOT_OPEN, m->path, "%s: cannot open: %s",
				    m->path, dwfl_errmsg(-1));
		dwfl_end(dwfl);
		return;
	}
	dwfl_report_end(dwfl, NULL, NULL);
	m->dwfl = dwfl;
	m->build_id_len = dwfl_module_build_id(m->mod, &m->build_id, &vaddr);
	if (m->build_id_len < 0)
		m->build_id_len = 0;
}

struct mf_sym_module *mf_sym_module_get(struct mf_symbolizer *sym, const char *path)
{
	struct mf_sym_module *m;
	const char *slash;

	HASH_FIND_STR(sym->mods, path, m);
	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strdup(path);
	slash = strrchr(path, '/');
	m->vdso = mf_sym_is_vdso(path);
	m->base = mf_sym_intern(sym, m->vdso   ? "[vdso]"
				     : path[0] ? (slash ? slash + 1 : path)
					       : "[unknown]");
	if (!m->path || !m->base) {
		free(m->path);
		free(m);
		return NULL;
	}
	HASH_ADD_KEYPTR(hh, sym->mods, m->path, strlen(m->path), m);
	if (!m->hh.tbl) {
		free(m->path);
		free(m);
		return NULL;
	}
	mf_sym_open(sym, m);
	return m;
}

/*
 * The profile may hold a prefix of a long build-id (the writer cuts them), so the one seen at
 * run time must be a prefix of the file's.
 */
static bool mf_sym_build_id_ok(struct mf_symbolizer *sym, struct mf_sym_module *m,
			       const uint8_t *build_id, size_t build_id_len)
{
	if (!build_id_len || !build_id)
		return true;
	if ((size_t)m->build_id_len >= build_id_len && !memcmp(m->build_id, build_id, build_id_len))
		return true;
	if (!m->warned_build_id && !m->vdso) { /* (another kernel's: named [vdso]+0xOFF) */
		m->warned_build_id = true;
		mf_sym_warn(sym, MF_SYM_WARN_BUILD_ID, m->path,
			    "%s: build-id differs from the profiled one (file changed since "
			    "the run?); its frames are shown as module+offset",
			    m->path);
	}
	return false;
}

/* The extent of the loaded segments of the file m opened (as lib/modules.c measures them in
 * the process); 0 when not known. */
static uint64_t mf_sym_span(struct mf_sym_module *m)
{
	GElf_Addr bias;
	GElf_Phdr ph;
	size_t n;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf || elf_getphdrnum(elf, &n))
		return 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			lo = ph.p_vaddr < lo ? ph.p_vaddr : lo;
			hi = ph.p_vaddr + ph.p_memsz > hi ? ph.p_vaddr + ph.p_memsz : hi;
		}
	return hi > lo ? hi - lo : 0;
}

void mf_sym_module_expect(struct mf_symbolizer *sym, struct mf_sym_module *m, uint64_t span,
			  uint64_t ended_ns)
{
	struct stat st;
	if (!m || m->file_checked || !m->dwfl)
		return;
	m->file_checked = true;
	uint64_t file_span = span ? mf_sym_span(m) : 0;
	uint64_t written = !stat(m->path, &st) ? (uint64_t)st.st_mtim.tv_sec * 1000000000u +
						     (uint64_t)st.st_mtim.tv_nsec
					       : 0;
	if (m->vdso ? !file_span || file_span == span
		    : (!file_span || file_span == span) && (!ended_ns || written <= ended_ns))
		return;
	m->stale = true;
	if (m->vdso)
		return;
	mf_sym_warn(sym, MF_SYM_WARN_BUILD_ID, m->path,
		    "%s: %s (it has no build-id to tell by: changed since the run?); its frames "
		    "are shown as module+offset",
		    m->path,
		    file_span && file_span != span
			? "its segments are not those of the profiled process's"
			: "written after the profiled processes ended");
}

static void mf_sym_check_dwarf(struct mf_symbolizer *sym, struct mf_sym_module *m)
{
	Dwarf_Addr bias;

	if (m->dwarf_checked)
		return;
	m->dwarf_checked = true;
	if (!dwfl_module_getdwarf(m->mod, &bias) && !m->vdso)
		mf_sym_warn(sym, MF_SYM_WARN_NO_DEBUG_INFO, m->path,
			    "%s: no debug info; install its -dbgsym package or rebuild with "
			    "-g for file:line",
			    m->path);
}

/* Appends frame (its function, file, line and column, inlined or not, language). */
static void mf_sym_push(struct mf_sym_vec *vec, const struct mf_sym_frame *frame)
{
	struct mf_sym_frame *f;

	if (vec->failed)
		return;
	if (!frame->function) {
		/* An interning failure: a partial chain would misattribute, so fall back. */
		vec->failed = true;
		return;
	}
	if (vec->n == vec->cap) {
		int cap = vec->cap ? vec->cap * 2 : 4;

		f = realloc(vec->v, cap * sizeof(*f));
		if (!f) {
			vec->failed = true;
			return;
		}
		vec->v = f;
		vec->cap = cap;
	}
	vec->v[vec->n++] = *frame;
}

/* A C++ function the debug info names bare (GCC gives no linkage name to one of internal
 * linkage: in an anonymous namespace, static, a lambda's): its name in the scopes its
 * declaration lies in, as the demangler would spell it, so that two such functions of one
 * name are not one. NULL when that cannot be told. */
static const char *mf_sym_scoped_name(struct mf_symbolizer *sym, struct mf_sym_module *m,
				      Dwarf_Die *die, const char *name)
{
	Dwarf_Die decl = *die, cu;
	Dwarf_Attribute attr;
	char scope[1024];

	/* the declaration: through an inlined copy's origin, a definition's specification */
	for (int i = 0; i < 8; i++)
		if (!dwarf_formref_die(dwarf_attr(&decl, DW_AT_abstract_origin, &attr)
					   ?: dwarf_attr(&decl, DW_AT_specification, &attr),
				       &decl))
			break;
	if (!m->inlines || !dwarf_diecu(&decl, &cu, NULL, NULL))
		return NULL;
	switch (dwarf_srclang(&cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
		break;
	default:
		return NULL;
	}
	if (mf_inlines_scope(m->inlines, &cu, &decl, scope, sizeof(scope)) || !scope[0])
		return NULL;
	return mf_sym_intern_fmt(sym, "%s%s", scope, name);
}

static const char *mf_sym_die_name(struct mf_symbolizer *sym, struct mf_sym_module *m,
				   Dwarf_Die *die, int *lang)
{
	Dwarf_Attribute attr;
	const char *name, *scoped;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr)
				    ?: dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (name)
		return mf_sym_name(sym, name, lang);
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	if (name && (scoped = mf_sym_scoped_name(sym, m, die, name))) {
		*lang = MF_LANG_CXX;
		return scoped;
	}
	return mf_sym_name(sym, name, lang);
}

/* A source file as addr2line names it: a name relative to the unit's compilation directory is
 * joined to it (rustc writes "src/main.rs" for a crate built from its parent). Interned. */
static const char *mf_sym_file(struct mf_symbolizer *sym, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir;

	if (!file || file[0] == '/' || !cu)
		return mf_sym_intern(sym, file);
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir || !dir[0])
		return mf_sym_intern(sym, file);
	return mf_sym_intern_fmt(sym, "%s/%s", dir, file);
}

static const char *mf_sym_call_file(struct mf_symbolizer *sym, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx;
	Dwarf_Die cu;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) != 0)
		return NULL;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, NULL) != 0)
		return NULL;
	return mf_sym_file(sym, &cu, dwarf_filesrc(files, idx, NULL, NULL));
}

/* The ELF symbol holding addr, from the module's sorted symbol table. */
static const char *mf_sym_symtab_name(struct mf_sym_module *m, Dwarf_Addr addr)
{
	if (!m->symtab_built) {
		m->symtab_built = true;
		m->symtab = mf_elfsym_build(m->mod);
	}
	return mf_elfsym_find(m->symtab, addr);
}

/* (Out of memory, it forgets every span: a part would refuse the code of the others.) */
static void mf_sym_code_add(struct mf_code *code, Dwarf_Addr low, Dwarf_Addr size)
{
	struct mf_span *s = mf_array_push(code->v, code->count, code->cap);
	if (s)
		*s = (struct mf_span){low, low + size};
	else {
		free(code->v);
		*code = (struct mf_code){0};
	}
}

/* m->code: the module's executable sections (its executable segments when it has no section
 * headers), moved from the ELF file's addresses to its DWARF's. */
static void mf_sym_code(struct mf_sym_module *m, Dwarf_Addr dwarf_bias)
{
	Dwarf_Addr bias;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t n;

	if (m->code_built)
		return;
	m->code_built = true;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf)
		return;
	bias -= dwarf_bias;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));)
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR))
			mf_sym_code_add(&m->code, sh.sh_addr + bias, sh.sh_size);
	if (!m->code.count && !elf_getphdrnum(elf, &n))
		for (size_t i = 0; i < n; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X))
				mf_sym_code_add(&m->code, ph.p_vaddr + bias, ph.p_memsz);
}

/*
 * The unit whose code holds addr, and *low where its range holding it starts; sets *bias as
 * dwfl_module_addrdie does. libdwfl's unit by .debug_aranges only when one of its ranges in
 * the code holds addr: libdwfl gives an address between two aranges to the unit before it
 * (the code after main, _start, to main's unit), and GNU ld leaves the arange of a function it
 * discarded at 0. Else by the units' own ranges (and an object without .debug_aranges has no
 * other way).
 */
static Dwarf_Die *mf_sym_unit(struct mf_sym_module *m, Dwarf_Addr addr, Dwarf_Addr *bias,
			      Dwarf_Addr *low)
{
	Dwarf *dwarf = dwfl_module_getdwarf(m->mod, bias);
	if (!dwarf)
		return NULL;
	mf_sym_code(m, *bias);
	Dwarf_Die *cudie = dwfl_module_addrdie(m->mod, addr, bias);
	if (cudie && mf_ranges_holds(cudie, addr - *bias, &m->code, low))
		return cudie;
	if (!m->units_built) {
		m->units_built = true;
		if (mf_ranges_add_units(&m->units, dwarf, &m->code))
			mf_ranges_free(&m->units); /* (out of memory: none found) */
		mf_ranges_sort(&m->units);
	}
	struct mf_range *r = mf_ranges_find(&m->units, addr - *bias);
	if (!r)
		return NULL;
	*low = r->low;
	return &r->die;
}

/*
 * The unit that holds the DIEs of cudie's code: cudie, or the split unit of a skeleton
 * (-gsplit-dwarf: in a .dwo, or a .dwp). NULL when it cannot be found (elfutils 0.188 reads no
 * .dwp; a .dwo moved or deleted), said once for the module: the skeleton's line table then has
 * inlined functions' lines with nothing to tell them from their caller's.
 */
static Dwarf_Die *mf_sym_split_unit(struct mf_symbolizer *sym, struct mf_sym_module *m,
				    Dwarf_Die *cudie, Dwarf_Die *split)
{
	uint8_t type;

	memset(split, 0, sizeof(*split));
	if (dwarf_cu_info(cudie->cu, NULL, &type, NULL, split, NULL, NULL, NULL) ||
	    type != DW_UT_skeleton)
		return cudie;
	if (split->cu && dwarf_tag(split) == DW_TAG_compile_unit)
		return split;
	if (!m->warned_split) {
		m->warned_split = true;
		mf_sym_warn(
		    sym, MF_SYM_WARN_SPLIT_DWARF, m->path,
		    "%s: its split debug info (-gsplit-dwarf: .dwo or .dwp) cannot be read; "
		    "its frames have no file:line and no inlined functions",
		    m->path);
	}
	return NULL;
}

/*
 * Like addr2line -i: the innermost frame gets the line table's file:line, and each frame
 * further out gets the call site recorded on the inlined_subroutine DIE inside it.
 */
static void mf_sym_resolve(struct mf_symbolizer *sym, struct mf_sym_module *m, Dwarf_Addr addr,
			   uint64_t rel_pc, struct mf_sym_vec *vec)
{
	struct mf_sym_frame at = {0}; /* where the frame now being found calls from */
	Dwarf_Die *scopes = NULL, *cudie, *unit = NULL, split;
	Dwarf_Addr bias = 0, low = 0, line_addr;
	int n = 0, i, lang = MF_LANG_C;

	/* No unit holds code without debug info: it gets the symbol table's name, no line. */
	cudie = mf_sym_unit(m, addr, &bias, &low);
	if (cudie)
		unit = mf_sym_split_unit(sym, m, cudie, &split);
	if (unit) {
		Dwarf_Line *line = dwarf_getsrc_die(cudie, addr - bias);
		/* A row before the range is another code's: libdw gives the row GCC puts at a
		 * function's end address (after its end_sequence) to the code after it. */
		if (line && !dwarf_lineaddr(line, &line_addr) && line_addr >= low &&
		    (at.file = mf_sym_file(sym, cudie, dwarf_linesrc(line, NULL, NULL)))) {
			dwarf_lineno(line, &at.line);
			dwarf_linecol(line, &at.column);
		}
	}
	if (unit && !m->inlines && !(m->inlines = mf_inlines_new(&m->code))) {
		vec->failed = true;
		return;
	}
	if (unit)
		n = mf_inlines_find(m->inlines, unit, addr - bias, &scopes);
	if (n < 0) {
		vec->failed = true;
		return;
	}
	/* scopes: the subprogram, then the inlined subroutines, innermost last */
	for (i = n - 1; i > 0; i--) {
		Dwarf_Attribute attr;
		Dwarf_Word w;

		at.function = mf_sym_die_name(sym, m, &scopes[i], &lang);
		at.named = at.function != NULL;
		if (!at.function)
			at.function = mf_sym_intern(sym, "??");
		at.inlined = 1;
		at.lang = lang;
		mf_sym_push(vec, &at);
		at.file = mf_sym_call_file(sym, &scopes[i]);
		at.line = at.column = 0;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &w) == 0)
			at.line = (int)w;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_column, &attr), &w) == 0)
			at.column = (int)w;
	}
	at.function = n > 0 ? mf_sym_die_name(sym, m, &scopes[0], &lang) : NULL;

	/* The real function: by DWARF, else by the ELF symbol table. */
	if (!at.function)
		at.function = mf_sym_name(sym, mf_sym_symtab_name(m, addr), &lang);
	at.lang = at.function ? lang : MF_LANG_C;
	at.named = at.function != NULL;
	if (!at.function && vec->n)
		at.function = mf_sym_intern_fmt(sym, "%s+0x%" PRIx64, m->base, rel_pc);
	at.inlined = 0;
	if (at.function || vec->n)
		mf_sym_push(vec, &at);
}

/* Keeps frames (n of them) as the last lookup's; returns them, or NULL when out of memory. */
static const struct mf_sym_frame *mf_sym_keep(struct mf_symbolizer *sym,
					      const struct mf_sym_frame *frames, int n)
{
	if (n > sym->cap_frames) {
		struct mf_sym_frame *f = realloc(sym->frames, n * sizeof(*f));
		if (!f)
			return NULL;
		sym->frames = f;
		sym->cap_frames = n;
	}
	memcpy(sym->frames, frames, n * sizeof(*frames));
	return sym->frames;
}

int mf_sym_lookup_in(struct mf_symbolizer *sym, struct mf_sym_module *m, const uint8_t *build_id,
		     size_t build_id_len, uint64_t rel_pc, int is_return_address,
		     const struct mf_sym_frame **out)
{
	struct mf_sym_vec vec = {0};
	struct mf_sym_frame fallback;
	const struct mf_sym_frame *kept;
	bool use_file;

	*out = &mf_sym_oom_frame;
	if (!m)
		return 1;
	use_file = m->dwfl && !m->stale && mf_sym_build_id_ok(sym, m, build_id, build_id_len);
	if (use_file) {
		/* A return address points after the call: look up the call itself. */
		Dwarf_Addr addr = (is_return_address && rel_pc) ? rel_pc - 1 : rel_pc;

		mf_sym_check_dwarf(sym, m);
		mf_sym_resolve(sym, m, addr, rel_pc, &vec);
	}
	if (vec.failed || !vec.n) {
		fallback.function = mf_sym_intern_fmt(sym, "%s+0x%" PRIx64, m->base, rel_pc);
		if (!fallback.function) {
			free(vec.v);
			return 1;
		}
		fallback.file = NULL;
		fallback.line = fallback.column = 0;
		fallback.inlined = 0;
		fallback.lang = MF_LANG_C;
		fallback.named = 0;
		kept = mf_sym_keep(sym, &fallback, 1);
		vec.n = 1;
	} else {
		kept = mf_sym_keep(sym, vec.v, vec.n);
	}
	free(vec.v);
	if (!kept)
		return 1;
	*out = kept;
	return vec.n;
}

/* The instructions of the kernel's signal return (rt_sigreturn) as C libraries and vdsos write
 * them, by machine: a signal handler "returns" to the first of them (x86-64: glibc's
 * __restore_rt; AArch64: the vdso's __kernel_rt_sigreturn). */
static const struct {
	int machine;
	size_t n;
	unsigned char code[9];
} mf_sym_sigreturns[] = {
    {EM_X86_64,
     9,
     {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}},	       /* mov $15,%rax; syscall */
    {EM_AARCH64, 8, {0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}}, /* mov x8,#139; svc #0 */
};

/* Are the n bytes at address at, in section scn (header sh) of m's ELF file, code? Read from
 * the file, those bytes only (the section's data would cost its size in memory: cc1's code is
 * megabytes); the vdso, in memory, from its data. */
static bool mf_sym_code_is(struct mf_sym_module *m, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t at,
			   const unsigned char *code, size_t n)
{
	unsigned char got[16];
	if (m->vdso) {
		Elf_Data *d = elf_getdata(scn, NULL);
		return d && d->d_buf && d->d_size >= (at - sh->sh_addr) + n &&
		       !memcmp((const char *)d->d_buf + (at - sh->sh_addr), code, n);
	}
	if (!m->file_fd)
		m->file_fd = open(m->path, O_RDONLY | O_CLOEXEC) + 1;
	return m->file_fd > 0 && n <= sizeof(got) &&
	       pread(m->file_fd - 1, got, n, (off_t)(sh->sh_offset + at - sh->sh_addr)) ==
		   (ssize_t)n &&
	       !memcmp(got, code, n);
}

bool mf_sym_is_sigreturn(struct mf_symbolizer *sym, struct mf_sym_module *m,
			 const uint8_t *build_id, size_t build_id_len, uint64_t rel_pc)
{
	Dwarf_Addr bias;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	if (!m || !m->dwfl || m->stale || !mf_sym_build_id_ok(sym, m, build_id, build_id_len))
		return false;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf || !gelf_getehdr(elf, &eh))
		return false;
	const uint64_t at = rel_pc - bias;
	for (size_t k = 0; k < sizeof(mf_sym_sigreturns) / sizeof(mf_sym_sigreturns[0]); k++) {
		const size_t n = mf_sym_sigreturns[k].n;
		if (mf_sym_sigreturns[k].machine != eh.e_machine)
			continue;
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
			    !(sh.sh_flags & SHF_EXECINSTR) || at < sh.sh_addr ||
			    at - sh.sh_addr > sh.sh_size || sh.sh_size - (at - sh.sh_addr) < n)
				continue;
			return mf_sym_code_is(m, scn, &sh, at, mf_sym_sigreturns[k].code, n);
		}
	}
	return false;
}

int mf_sym_lookup(struct mf_symbolizer *sym, const char *path, const uint8_t *build_id,
		  size_t build_id_len, uint64_t rel_pc, int is_return_address,
		  const struct mf_sym_frame **out)
{
	return mf_sym_lookup_in(sym, mf_sym_module_get(sym, path ? path : ""), build_id,
				build_id_len, rel_pc, is_return_address, out);
}
