/* DIEs by the code they cover (see ranges.h). */
#include "config.h"

#include <stdlib.h>

#include "array.h"
#include "ranges.h"

int mf_code_holds(const struct mf_code *code, Dwarf_Addr low, Dwarf_Addr high)
{
	/* 0 is never code: the ELF header is there */
	if (!low || high <= low)
		return 0;
	if (!code || !code->count)
		return 1;
	for (size_t i = 0; i < code->count; i++)
		if (code->v[i].low <= low && high <= code->v[i].high)
			return 1;
	return 0;
}

int mf_ranges_holds(Dwarf_Die *die, Dwarf_Addr addr, const struct mf_code *code, Dwarf_Addr *low)
{
	Dwarf_Addr base, lo, hi;
	for (ptrdiff_t at = 0; (at = dwarf_ranges(die, at, &base, &lo, &hi)) > 0;)
		if (lo <= addr && addr < hi && mf_code_holds(code, lo, hi)) {
			if (low)
				*low = lo;
			return 1;
		}
	return 0;
}

int mf_ranges_add(struct mf_ranges *r, Dwarf_Die *die, const struct mf_code *code)
{
	Dwarf_Addr base, low, high;
	for (ptrdiff_t at = 0; (at = dwarf_ranges(die, at, &base, &low, &high)) > 0;) {
		if (!mf_code_holds(code, low, high))
			continue;
		struct mf_range *v = mf_array_push(r->v, r->count, r->cap);
		if (!v)
			return -1;
		*v = (struct mf_range){low, high, *die};
	}
	return 0;
}

int mf_ranges_add_units(struct mf_ranges *r, Dwarf *dwarf, const struct mf_code *code)
{
	Dwarf_Off off = 0, next;
	size_t header;
	for (; dwarf_nextcu(dwarf, off, &next, &header, NULL, NULL, NULL) == 0; off = next) {
		Dwarf_Die cu;
		if (dwarf_offdie(dwarf, off + header, &cu) && mf_ranges_add(r, &cu, code))
			return -1;
	}
	return 0;
}

static int mf_range_cmp(const void *a, const void *b)
{
	const struct mf_range *x = a, *y = b;
	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->high < y->high ? -1 : x->high > y->high;
}

void mf_ranges_sort(struct mf_ranges *r)
{
	if (r->count > 1)
		qsort(r->v, r->count, sizeof(*r->v), mf_range_cmp);
}

struct mf_range *mf_ranges_find(struct mf_ranges *r, Dwarf_Addr addr)
{
	size_t lo = 0, hi = r->count; /* v[0 .. lo) start at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->v[mid].low <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	struct mf_range *best = NULL;
	/* Ranges do not nest but in odd code (nested functions): look a little way back. */
	for (size_t k = lo; k-- > 0 && lo - k <= 64;) {
		struct mf_range *x = &r->v[k];
		if (addr < x->high && (!best || x->high - x->low < best->high - best->low))
			best = x;
	}
	return best;
}

void mf_ranges_free(struct mf_ranges *r)
{
	free(r->v);
	*r = (struct mf_ranges){0};
}
