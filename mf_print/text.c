/* Numbers and names as the text reports print them (see text.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

void mf_text_bytes(char *buf, size_t size, uint64_t b)
{
	const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)b;
	int u = 0;
	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (b == UINT64_MAX) /* (a sum held at its maximum: at least that) */
		snprintf(buf, size, ">=%.1f %s", v, unit[u]);
	else if (u == 0)
		snprintf(buf, size, "%" PRIu64 " B", b);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
}

void mf_text_leaked(char *buf, size_t size, uint64_t blocks, uint64_t bytes)
{
	char b[32], both[64];
	mf_text_bytes(b, sizeof(b), bytes);
	snprintf(both, sizeof(both), "%" PRIu64 " (%s)", blocks, b);
	snprintf(buf, size, " %23s", both);
}

void mf_text_ns(char *buf, size_t size, double ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, size, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.1f s", ns / 1e9);
}

void mf_text_lifetime_bucket(char *buf, size_t size, int b)
{
	char lo[24], hi[24];
	if (b <= 0) {
		snprintf(buf, size, "< 1 ns");
		return;
	}
	mf_text_ns(lo, sizeof(lo), (double)(1ull << (b - 1)));
	mf_text_ns(hi, sizeof(hi), (double)(1ull << (b < 64 ? b : 63)) * (b < 64 ? 1 : 2));
	snprintf(buf, size, "[%s, %s)", lo, hi);
}

void mf_text_life(char *buf, size_t size, uint64_t leaked_blocks, uint64_t leaked,
		  uint64_t peak_blocks, uint64_t peak, int median)
{
	char a[72], b[32], both[64], life[32] = "-";
	mf_text_leaked(a, sizeof(a), leaked_blocks, leaked);
	mf_text_bytes(b, sizeof(b), peak);
	snprintf(both, sizeof(both), "%" PRIu64 " (%s)", peak_blocks, b);
	if (median == 0)
		snprintf(life, sizeof(life), "< 1 ns");
	else if (median > 0) {
		char t[24];
		mf_text_ns(t, sizeof(t), (double)(1ull << (median < 64 ? median : 63)));
		snprintf(life, sizeof(life), "< %s", t);
	}
	snprintf(buf, size, "%s %19s %11s", a, both, life);
}

void mf_text_most(char *buf, size_t size, uint64_t max_blocks, uint64_t max_bytes, uint64_t freed,
		  uint64_t lifetime_ns)
{
	char b[32], both[64], mean[32] = "-";
	mf_text_bytes(b, sizeof(b), max_bytes);
	snprintf(both, sizeof(both), "%" PRIu64 " (%s)", max_blocks, b);
	if (freed)
		mf_text_ns(mean, sizeof(mean), (double)lifetime_ns / (double)freed);
	snprintf(buf, size, " %19s %10s", both, mean);
}

int mf_strbuf_add(struct mf_strbuf *b, const char *s, size_t n)
{
	if (!n)
		return 0;
	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2;
		char *p = realloc(b->s, cap);
		if (!p)
			return -ENOMEM;
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	return 0;
}

/* The length of the UTF-8 character at s (1 to 4), or 0 if it is not one (or is a C1 control,
 * U+0080 to U+009F, which terminals act on too). */
static size_t mf_utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 && s[0] <= 0xf4	  ? 4
		   : s[0] >= 0xe0		  ? 3
		   : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
						  : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return n;
}

char *mf_text_escape(const char *in, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0;
	if (!size)
		return out;
	while (*s) {
		char esc[8];
		size_t n = 1;
		const char *put = esc;
		if (*s == '\\')
			snprintf(esc, sizeof(esc), "\\\\");
		else if (*s == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (*s == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (*s == '\r')
			snprintf(esc, sizeof(esc), "\\r");
		else if (*s < 0x20 || *s == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", *s);
		else if (*s < 0x80)
			esc[0] = (char)*s, esc[1] = 0;
		else if ((n = mf_utf8_len(s)))
			put = (const char *)s;
		else
			n = 1, snprintf(esc, sizeof(esc), "\\x%02x", *s);
		size_t len = put == esc ? strlen(esc) : n;
		if (o + len + 1 > size)
			break;
		memcpy(out + o, put, len);
		o += len;
		s += n;
	}
	out[o] = 0;
	return out;
}
