/* mf_print's hash sets of ids: open addressing over a power-of-two array of uint32_t ids
 * (MF_IDSET_EMPTY: a free slot), whose keys live in the tables the ids index. The caller
 * hashes and compares; the set only finds slots and grows. */
#ifndef MF_IDSET_H
#define MF_IDSET_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MF_IDSET_EMPTY UINT32_MAX

struct mf_idset {
	uint32_t *slot;
	size_t mask, used;
};

/* A step of a 64-bit hash. */
static inline uint64_t mf_hash_mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

static inline uint64_t mf_hash_str(const char *s)
{
	uint64_t h = 0x51afd7ed558ccd1dull;
	for (; *s; s++)
		h = mf_hash_mix(h, (unsigned char)*s);
	return h;
}

/* An empty set of cap slots (a power of two). 0 or -ENOMEM. */
static inline int mf_idset_init(struct mf_idset *s, size_t cap)
{
	s->slot = malloc(cap * sizeof(*s->slot));
	if (!s->slot)
		return -ENOMEM;
	memset(s->slot, 0xff, cap * sizeof(*s->slot));
	s->mask = cap - 1;
	s->used = 0;
	return 0;
}

/* Room for one more id, growing the set; rehash(ctx, id) is a present id's hash. 0 or
 * -ENOMEM. */
static inline int mf_idset_room(struct mf_idset *s,
				uint64_t (*rehash)(const void *ctx, uint32_t id), const void *ctx)
{
	if ((s->used + 1) * 2 <= s->mask + 1)
		return 0;
	struct mf_idset bigger;
	if (mf_idset_init(&bigger, (s->mask + 1) * 2))
		return -ENOMEM;
	for (size_t i = 0; i <= s->mask; i++) {
		uint32_t id = s->slot[i];
		if (id == MF_IDSET_EMPTY)
			continue;
		size_t at = rehash(ctx, id) & bigger.mask;
		while (bigger.slot[at] != MF_IDSET_EMPTY)
			at = (at + 1) & bigger.mask;
		bigger.slot[at] = id;
	}
	bigger.used = s->used;
	free(s->slot);
	*s = bigger;
	return 0;
}

/* Puts id (not present; mf_idset_room called) in the set. */
static inline void mf_idset_put(struct mf_idset *s, uint64_t hash, uint32_t id)
{
	size_t at = hash & s->mask;
	while (s->slot[at] != MF_IDSET_EMPTY)
		at = (at + 1) & s->mask;
	s->slot[at] = id;
	s->used++;
}

/* Iterating the ids whose hash is hash: for (at = mf_idset_first(s, hash); s->slot[at] !=
 * MF_IDSET_EMPTY; at = mf_idset_next(s, at)). */
static inline size_t mf_idset_first(const struct mf_idset *s, uint64_t hash)
{
	return hash & s->mask;
}
static inline size_t mf_idset_next(const struct mf_idset *s, size_t at)
{
	return (at + 1) & s->mask;
}

#endif
