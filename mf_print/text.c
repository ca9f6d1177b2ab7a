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
	const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)b;
	int u = 0;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%" PRIu64 " B", b);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
}

int mf_strbuf_add(struct mf_strbuf *b, const char *s, size_t n)
{
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
