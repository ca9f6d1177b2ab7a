/* Finding an address's subprogram and inlined subroutines (see inlines.h). A unit's index is
 * the code ranges of every subprogram in it (ranges.h); an address's subprogram is the
 * smallest range holding it, and from there the walk goes down through the DIEs whose ranges hold
 * it (lexical blocks, inlined subroutines), keeping the inlined ones. */
#include "config.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "idset.h"
#include "inlines.h"
#include "ranges.h"

/* A DIE a function's name may be scoped by (namespace, class, function), or a function. */
struct mf_scope {
	void *key;	 /* the DIE's address in .debug_info */
	uint32_t parent; /* the scope it lies in, or MF_SCOPE_NONE */
	Dwarf_Die die;
};
#define MF_SCOPE_NONE UINT32_MAX

struct mf_unit {
	void *key;		      /* the unit DIE's address in .debug_info */
	struct mf_ranges subprograms; /* by their code */
	struct mf_scope *scopes;
	size_t nscopes, cap_scopes;
	struct mf_idset scope_index; /* of scopes, by key */
};

struct mf_inlines {
	const struct mf_code *code; /* where a DIE's range must lie to be taken */
	struct mf_unit *units;
	size_t count, cap;
	struct mf_idset index; /* of units, by key */
	Dwarf_Die *scopes;
	size_t nscopes, cap_scopes;
};

struct mf_inlines *mf_inlines_new(const struct mf_code *code)
{
	struct mf_inlines *x = calloc(1, sizeof(*x));
	if (x && mf_idset_init(&x->index, 64)) {
		free(x);
		return NULL;
	}
	if (x)
		x->code = code;
	return x;
}

void mf_inlines_free(struct mf_inlines *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->count; i++) {
		mf_ranges_free(&x->units[i].subprograms);
		free(x->units[i].scopes);
		free(x->units[i].scope_index.slot);
	}
	free(x->units);
	free(x->index.slot);
	free(x->scopes);
	free(x);
}

/* Tags under which subprograms with code may be found. */
static int mf_may_hold_subprograms(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_module:
	case DW_TAG_namespace:
	case DW_TAG_subprogram:
	case DW_TAG_lexical_block:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_interface_type:
		return 1;
	}
	return 0;
}

static uint64_t mf_key_hash(const void *key)
{
	return mf_hash_mix(0x9e3779b97f4a7c15ull, (uintptr_t)key);
}

static uint64_t mf_scope_rehash(const void *ctx, uint32_t id)
{
	return mf_key_hash(((const struct mf_unit *)ctx)->scopes[id].key);
}

/* die as a scope of u's, in parent; its index, or MF_SCOPE_NONE when out of memory. */
static uint32_t mf_scope_add(struct mf_unit *u, Dwarf_Die *die, uint32_t parent)
{
	if (mf_idset_room(&u->scope_index, mf_scope_rehash, u))
		return MF_SCOPE_NONE;
	struct mf_scope *s = mf_array_push(u->scopes, u->nscopes, u->cap_scopes);
	if (!s)
		return MF_SCOPE_NONE;
	*s = (struct mf_scope){die->addr, parent, *die};
	mf_idset_put(&u->scope_index, mf_key_hash(die->addr), (uint32_t)u->nscopes - 1);
	return (uint32_t)u->nscopes - 1;
}

/* The subprograms with code under parent (in scope `in`), and every scope on the way. */
static int mf_unit_walk(struct mf_unit *u, const struct mf_code *code, Dwarf_Die *parent,
			uint32_t in)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram && mf_ranges_add(&u->subprograms, &child, code))
			return -1;
		if (!mf_may_hold_subprograms(tag) && tag != DW_TAG_subprogram)
			continue;
		uint32_t scope = in;
		if (tag != DW_TAG_lexical_block &&
		    (scope = mf_scope_add(u, &child, in)) == MF_SCOPE_NONE)
			return -1;
		if (mf_may_hold_subprograms(tag) && mf_unit_walk(u, code, &child, scope))
			return -1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static uint64_t mf_unit_rehash(const void *ctx, uint32_t id)
{
	return mf_key_hash(((const struct mf_inlines *)ctx)->units[id].key);
}

/* The index of cudie's unit, made on first use. */
static struct mf_unit *mf_unit_get(struct mf_inlines *x, Dwarf_Die *cudie)
{
	uint64_t hash = mf_key_hash(cudie->addr);
	for (size_t at = mf_idset_first(&x->index, hash); x->index.slot[at] != MF_IDSET_EMPTY;
	     at = mf_idset_next(&x->index, at))
		if (x->units[x->index.slot[at]].key == cudie->addr)
			return &x->units[x->index.slot[at]];
	if (mf_idset_room(&x->index, mf_unit_rehash, x))
		return NULL;
	struct mf_unit *u = mf_array_push(x->units, x->count, x->cap);
	if (!u)
		return NULL;
	u->key = cudie->addr;
	mf_idset_put(&x->index, hash, (uint32_t)x->count - 1);
	if (mf_idset_init(&u->scope_index, 64) || mf_unit_walk(u, x->code, cudie, MF_SCOPE_NONE))
		return NULL;
	mf_ranges_sort(&u->subprograms);
	return u;
}

static int mf_scope_push(struct mf_inlines *x, Dwarf_Die *die)
{
	Dwarf_Die *s = mf_array_push(x->scopes, x->nscopes, x->cap_scopes);
	if (!s)
		return -1;
	*s = *die;
	return 0;
}

int mf_inlines_find(struct mf_inlines *x, Dwarf_Die *cudie, Dwarf_Addr addr, Dwarf_Die **scopes)
{
	x->nscopes = 0;
	struct mf_unit *u = mf_unit_get(x, cudie);
	if (!u)
		return -1;
	struct mf_range *sub = mf_ranges_find(&u->subprograms, addr);
	if (!sub)
		return 0;
	Dwarf_Die at = sub->die, child;
	if (mf_scope_push(x, &at))
		return -1;
	/* Down through the children that hold addr: blocks, and inlined subroutines. */
	for (int found = 1; found && dwarf_child(&at, &child) == 0;) {
		found = 0;
		do {
			int tag = dwarf_tag(&child);
			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
			    tag != DW_TAG_try_block && tag != DW_TAG_catch_block &&
			    tag != DW_TAG_with_stmt)
				continue;
			if (!mf_ranges_holds(&child, addr, x->code, NULL))
				continue;
			if (tag == DW_TAG_inlined_subroutine && mf_scope_push(x, &child))
				return -1;
			at = child;
			found = 1;
			break;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	*scopes = x->scopes;
	return (int)x->nscopes;
}

/* A scope's name as the demangler spells it: an anonymous namespace's; a lambda's closure, an
 * unnamed class of a function (GCC's). */
static const char *mf_scope_name(Dwarf_Die *die, int in_function)
{
	const char *name = dwarf_diename(die);
	if (name)
		return name;
	if (dwarf_tag(die) == DW_TAG_namespace)
		return "(anonymous namespace)";
	return in_function ? "{lambda}" : "{unnamed type}";
}

int mf_inlines_scope(struct mf_inlines *x, Dwarf_Die *cudie, Dwarf_Die *decl, char *buf,
		     size_t size)
{
	struct mf_unit *u = mf_unit_get(x, cudie);
	if (!u || !size)
		return -1;
	uint32_t at = MF_SCOPE_NONE;
	uint64_t hash = mf_key_hash(decl->addr);
	for (size_t i = mf_idset_first(&u->scope_index, hash);
	     u->scope_index.slot[i] != MF_IDSET_EMPTY; i = mf_idset_next(&u->scope_index, i))
		if (u->scopes[u->scope_index.slot[i]].key == decl->addr)
			at = u->scope_index.slot[i];
	if (at == MF_SCOPE_NONE)
		return -1;
	uint32_t chain[32];
	int n = 0;
	for (uint32_t s = u->scopes[at].parent; s != MF_SCOPE_NONE && n < 32;
	     s = u->scopes[s].parent)
		chain[n++] = s;
	size_t len = 0;
	buf[0] = 0;
	for (int k = n - 1; k >= 0; k--) {
		int in_function =
		    k + 1 < n && dwarf_tag(&u->scopes[chain[k + 1]].die) == DW_TAG_subprogram;
		int w = snprintf(buf + len, size - len,
				 "%s::", mf_scope_name(&u->scopes[chain[k]].die, in_function));
		if (w < 0 || (size_t)w >= size - len)
			return -1;
		len += (size_t)w;
	}
	return 0;
}
