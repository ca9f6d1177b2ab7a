/* The unit of an address from the units' own ranges (see units.h). */
#include "config.h"

#include <stdlib.h>

#include "array.h"
#include "units.h"

struct mf_unit_range {
	Dwarf_Addr low, high; /* [low, high) */
	size_t unit;
};

struct mf_units {
	Dwarf_Die *units;
	size_t count, cap;
	struct mf_unit_range *ranges;
	size_t nranges, cap_ranges;
};

static int mf_unit_range_cmp(const void *a, const void *b)
{
	const struct mf_unit_range *x = a, *y = b;
	return x->low < y->low ? -1 : x->low > y->low;
}

struct mf_units *mf_units_new(Dwarf *dwarf)
{
	struct mf_units *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	Dwarf_Off off = 0, next;
	size_t header;
	for (; dwarf_nextcu(dwarf, off, &next, &header, NULL, NULL, NULL) == 0; off = next) {
		Dwarf_Die cu;
		if (!dwarf_offdie(dwarf, off + header, &cu))
			continue;
		Dwarf_Die *u = mf_array_push(x->units, x->count, x->cap);
		if (!u)
			goto oom;
		*u = cu;
		Dwarf_Addr base, low, high;
		for (ptrdiff_t at = 0; (at = dwarf_ranges(&cu, at, &base, &low, &high)) > 0;) {
			if (low >= high)
				continue;
			struct mf_unit_range *r =
			    mf_array_push(x->ranges, x->nranges, x->cap_ranges);
			if (!r)
				goto oom;
			*r = (struct mf_unit_range){low, high, x->count - 1};
		}
	}
	if (x->nranges)
		qsort(x->ranges, x->nranges, sizeof(*x->ranges), mf_unit_range_cmp);
	return x;
oom:
	mf_units_free(x);
	return NULL;
}

void mf_units_free(struct mf_units *x)
{
	if (!x)
		return;
	free(x->units);
	free(x->ranges);
	free(x);
}

Dwarf_Die *mf_units_find(struct mf_units *x, Dwarf_Addr addr)
{
	/* the last range starting at or below addr, then back over those that also do (units'
	 * ranges do not overlap in a sane object; in one that does, any holding addr will do) */
	size_t lo = 0, hi = x->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->ranges[mid].low <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= 16;)
		if (addr < x->ranges[i].high)
			return &x->units[x->ranges[i].unit];
	return NULL;
}
