/* Numbers and names as the text reports print them. */
#ifndef MF_TEXT_H
#define MF_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "123 B", "1.5 KiB" ... "16.0 EiB" into buf (size bytes). */
void mf_text_bytes(char *buf, size_t size, uint64_t bytes);

/* part as a percentage of total (0 when total is 0). */
static inline double mf_text_pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* "  12.3%": the share of a line's calls whose blocks were temporaries (a column of 8). */
static inline void mf_text_temporary(char *buf, size_t size, uint64_t temporaries, uint64_t calls)
{
	snprintf(buf, size, " %6.1f%%", mf_text_pct(temporaries, calls));
}

/* "   12 (1.5 KiB)": blocks live at the end and their bytes (a column of 24), into buf. */
void mf_text_leaked(char *buf, size_t size, uint64_t blocks, uint64_t bytes);
/* A duration: "512 ns", "1.5 us", "33.6 ms", "2.0 s". */
void mf_text_ns(char *buf, size_t size, double ns);
/* A lifetime bucket (MF_LIFETIME_BUCKETS): "< 1 ns", "[1.0 us, 2.0 us)". */
void mf_text_lifetime_bucket(char *buf, size_t size, int bucket);
/* The lifetimes' columns of a line (leaked, live at the peak, the median lifetime's bucket
 * (-1: none freed) as its bound, "< 2.0 us"), and their heading. */
#define MF_TEXT_LIFE_HEADING "   leaked blocks (bytes)     at peak (bytes) median life"
void mf_text_life(char *buf, size_t size, uint64_t leaked_blocks, uint64_t leaked,
		  uint64_t peak_blocks, uint64_t peak, int median);
/* The maximums' columns of a line (lifetimes, format 8): the most blocks (bytes) live at
 * once, and the mean lifetime of the freed blocks ("-": none freed), and their heading. */
#define MF_TEXT_MOST_HEADING "    max live (bytes)  mean life"
void mf_text_most(char *buf, size_t size, uint64_t max_blocks, uint64_t max_bytes, uint64_t freed,
		  uint64_t lifetime_ns);

/* in as a terminal may show it, into out (size bytes, always terminated): what a terminal
 * would act on is made visible, so that a name cannot break a table or send escape sequences
 * to the viewer: a backslash as \\, control characters as \n, \t, \r or \xNN (\x1b for
 * escape), bytes that are not UTF-8 (and UTF-8's own control characters) as \xNN. Text that
 * does not fit is cut at a whole character. Returns out. */
char *mf_text_escape(const char *in, char *out, size_t size);
/* The same as a label cleaner (mf_labels_build). */
static inline void mf_text_clean(const char *in, char *out, size_t size)
{
	mf_text_escape(in, out, size);
}

/* A growing string: a tree's left margin, a collapsed line's frames. */
struct mf_strbuf {
	char *s; /* not terminated */
	size_t len, cap;
};
/* Appends s[0..n). 0 or -ENOMEM. */
int mf_strbuf_add(struct mf_strbuf *b, const char *s, size_t n);

#endif
