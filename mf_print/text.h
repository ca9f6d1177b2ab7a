/* Numbers and names as the text reports print them. */
#ifndef MF_TEXT_H
#define MF_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* "123 B", "1.5 KiB" ... into buf (size bytes). */
void mf_text_bytes(char *buf, size_t size, uint64_t bytes);

/* part as a percentage of total (0 when total is 0). */
static inline double mf_text_pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* A growing string: a tree's left margin, a collapsed line's frames. */
struct mf_strbuf {
	char *s; /* not terminated */
	size_t len, cap;
};
/* Appends s[0..n). 0 or -ENOMEM. */
int mf_strbuf_add(struct mf_strbuf *b, const char *s, size_t n);

#endif
