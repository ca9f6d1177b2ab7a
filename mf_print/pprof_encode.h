/* A small protocol buffers encoder, enough for pprof's profile.proto: varints, strings and
 * nested messages appended to growing buffers, and the whole gzipped (zlib) to a stream. Knows
 * nothing of profiles; never prints. */
#ifndef MF_PPROF_ENCODE_H
#define MF_PPROF_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A message being built. Functions that append set err (-ENOMEM) instead of failing; once
 * set, they append nothing more, so a caller checks once at the end. */
struct mf_pb {
	uint8_t *p;
	size_t len, cap;
	int err;
};

/* field = v as a varint (int64 and uint64 alike: a negative int64 is its two's complement).
 * Zero is written too (proto3 readers take it as absent). */
void mf_pb_varint(struct mf_pb *b, uint32_t field, uint64_t v);
/* field = the n bytes at s (a string or bytes field). */
void mf_pb_bytes(struct mf_pb *b, uint32_t field, const void *s, size_t n);
/* field = v[0..n) as one packed repeated varint field; nothing when n is 0. */
void mf_pb_packed(struct mf_pb *b, uint32_t field, const uint64_t *v, size_t n);
/* field = the message child holds; child is emptied for reuse (its memory kept). */
void mf_pb_message(struct mf_pb *b, uint32_t field, struct mf_pb *child);
void mf_pb_free(struct mf_pb *b);

/* b's bytes gzipped to out. 0, b->err, -ENOMEM, or -EIO when the stream fails. */
int mf_pb_write_gzip(const struct mf_pb *b, FILE *out);

#endif
