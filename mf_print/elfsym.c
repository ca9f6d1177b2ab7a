/* The sorted symbol table (see elfsym.h). At one address the best name is kept: a symbol with
 * a size before one without, a function before other kinds, global before weak before local;
 * aliases are then one entry. */
#include "config.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "elfsym.h"

struct mf_elfsym_entry {
	uint64_t addr, size;
	const char *name;
	int rank; /* higher: preferred at the same address */
};

struct mf_elfsym {
	struct mf_elfsym_entry *v;
	size_t count;
};

static int mf_elfsym_rank(const GElf_Sym *s)
{
	int bind = GELF_ST_BIND(s->st_info), type = GELF_ST_TYPE(s->st_info);
	return (s->st_size ? 8 : 0) + (type == STT_FUNC || type == STT_GNU_IFUNC ? 4 : 0) +
	       (bind == STB_GLOBAL ? 2
		: bind == STB_WEAK ? 1
				   : 0);
}

static int mf_elfsym_cmp(const void *a, const void *b)
{
	const struct mf_elfsym_entry *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	return strcmp(x->name, y->name); /* (a stable choice among equals) */
}

struct mf_elfsym *mf_elfsym_build(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	if (n <= 1)
		return NULL;
	struct mf_elfsym *t = calloc(1, sizeof(*t));
	if (!t || !(t->v = malloc((size_t)n * sizeof(*t->v)))) {
		free(t);
		return NULL;
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &s, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(s.st_info);
		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS ||
		    type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		t->v[t->count++] =
		    (struct mf_elfsym_entry){addr, s.st_size, name, mf_elfsym_rank(&s)};
	}
	qsort(t->v, t->count, sizeof(*t->v), mf_elfsym_cmp);
	size_t kept = 0; /* the best of each address */
	for (size_t i = 0; i < t->count; i++)
		if (!kept || t->v[i].addr != t->v[kept - 1].addr)
			t->v[kept++] = t->v[i];
	t->count = kept;
	if (!kept) {
		mf_elfsym_free(t);
		return NULL;
	}
	return t;
}

const char *mf_elfsym_find(const struct mf_elfsym *t, uint64_t addr)
{
	if (!t || !t->count || addr < t->v[0].addr)
		return NULL;
	size_t lo = 0, hi = t->count; /* the last entry at or below addr: v[lo] */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct mf_elfsym_entry *e = &t->v[lo];
	if (!e->size || addr - e->addr < e->size)
		return e->name;
	/* Past its end: a larger symbol further down may still cover addr (rare). */
	for (size_t k = 1; k <= 16 && k <= lo; k++) {
		const struct mf_elfsym_entry *d = &t->v[lo - k];
		if (d->size && addr - d->addr < d->size)
			return d->name;
	}
	return NULL;
}

void mf_elfsym_free(struct mf_elfsym *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}
