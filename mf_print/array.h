/* mf_print's growable arrays: one place that doubles a capacity and checks the allocation. */
#ifndef MF_ARRAY_H
#define MF_ARRAY_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more elements after count in v (capacity *capacity, elements of elem bytes):
 * returns v, or v moved to a larger block with *capacity updated, or NULL (v untouched) when
 * out of memory. */
static inline void *mf_array_room_n(void *v, size_t count, size_t n, size_t *capacity, size_t elem)
{
	if (count + n <= *capacity)
		return v;
	size_t cap = *capacity ? *capacity : 64;
	while (cap < count + n && cap <= SIZE_MAX / 2)
		cap *= 2;
	if (cap < count + n || cap > SIZE_MAX / elem)
		return NULL;
	void *grown = realloc(v, cap * elem);
	if (grown)
		*capacity = cap;
	return grown;
}

/* Room for element number count. */
static inline void *mf_array_room(void *v, size_t count, size_t *capacity, size_t elem)
{
	return mf_array_room_n(v, count, 1, capacity, elem);
}

/* A new zeroed element at the end of array v (count and capacity: lvalues): its address, with
 * count incremented; NULL (v untouched) when out of memory. */
#define mf_array_push(v, count, capacity)                                                          \
	({                                                                                         \
		__typeof__(v) grown_ = mf_array_room((v), (count), &(capacity), sizeof(*(v)));     \
		grown_ ? ((v) = grown_, memset(&(v)[(count)], 0, sizeof(*(v))), &(v)[(count)++])   \
		       : NULL;                                                                     \
	})

#endif
