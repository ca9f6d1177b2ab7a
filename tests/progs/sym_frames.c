/* Prints what mf_print's symbolizer makes of addresses of a program, for tests that compare it
 * with binutils' addr2line: for each return address ADDR (hex), the frames at ADDR - 1,
 * innermost first, one "function\tfile:line" line each (names as demangled, in full), then
 * an empty line. Usage: sym_frames BINARY ADDR... */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../mf_print/symbolize.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sym_frames BINARY ADDR...\n");
		return 2;
	}
	struct mf_symbolizer *sym = mf_sym_new();
	if (!sym)
		return 1;
	for (int i = 2; i < argc; i++) {
		uint64_t addr = strtoull(argv[i], NULL, 16);
		const struct mf_sym_frame *f;
		int n = mf_sym_lookup(sym, argv[1], NULL, 0, addr, 1, &f);
		for (int k = 0; k < n; k++)
			printf("%s\t%s:%d\n", f[k].function, f[k].file ? f[k].file : "??",
			       f[k].line);
		printf("\n");
	}
	mf_sym_free(sym);
	return 0;
}
