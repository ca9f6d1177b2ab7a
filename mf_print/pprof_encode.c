/* The protocol buffers encoder of pprof_encode.h: wire types 0 (varint) and 2 (length
 * delimited) only, which is all profile.proto uses; gzip by zlib's deflate. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "array.h"
#include "pprof_encode.h"

static uint8_t *mf_pb_room(struct mf_pb *b, size_t n)
{
	if (b->err)
		return NULL;
	uint8_t *p = mf_array_room_n(b->p, b->len, n, &b->cap, 1);
	if (!p) {
		b->err = -ENOMEM;
		return NULL;
	}
	b->p = p;
	return p + b->len;
}

static void mf_pb_raw_varint(struct mf_pb *b, uint64_t v)
{
	uint8_t *p = mf_pb_room(b, 10);
	if (!p)
		return;
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	b->len += n;
}

static void mf_pb_raw(struct mf_pb *b, const void *s, size_t n)
{
	uint8_t *p = mf_pb_room(b, n ? n : 1);
	if (p && n) {
		memcpy(p, s, n);
		b->len += n;
	}
}

void mf_pb_varint(struct mf_pb *b, uint32_t field, uint64_t v)
{
	mf_pb_raw_varint(b, (uint64_t)field << 3 | 0);
	mf_pb_raw_varint(b, v);
}

void mf_pb_bytes(struct mf_pb *b, uint32_t field, const void *s, size_t n)
{
	mf_pb_raw_varint(b, (uint64_t)field << 3 | 2);
	mf_pb_raw_varint(b, n);
	mf_pb_raw(b, s, n);
}

void mf_pb_packed(struct mf_pb *b, uint32_t field, const uint64_t *v, size_t n)
{
	if (!n)
		return;
	size_t size = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];
		do {
			size++;
			x >>= 7;
		} while (x);
	}
	mf_pb_raw_varint(b, (uint64_t)field << 3 | 2);
	mf_pb_raw_varint(b, size);
	for (size_t i = 0; i < n; i++)
		mf_pb_raw_varint(b, v[i]);
}

void mf_pb_message(struct mf_pb *b, uint32_t field, struct mf_pb *child)
{
	if (child->err && !b->err)
		b->err = child->err;
	mf_pb_bytes(b, field, child->p, child->len);
	child->len = 0;
}

void mf_pb_free(struct mf_pb *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

int mf_pb_write_gzip(const struct mf_pb *b, FILE *out)
{
	if (b->err)
		return b->err;
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer, as pprof expects of a .pb.gz */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	uint8_t chunk[65536];
	int r = 0, zr;
	z.next_in = b->p;
	size_t left = b->len;
	do {
		uInt in = left > (1u << 30) ? 1u << 30 : (uInt)left;
		z.avail_in = in;
		left -= in;
		int flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			zr = deflate(&z, flush);
			size_t have = sizeof(chunk) - z.avail_out;
			if (have && fwrite(chunk, 1, have, out) != have)
				r = -EIO;
		} while (!r && z.avail_out == 0);
	} while (!r && left);
	if (!r && zr != Z_STREAM_END)
		r = -EIO;
	deflateEnd(&z);
	return r;
}
