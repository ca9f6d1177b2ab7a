/* TAP test of mf_print/symbolize.c. It builds tests/progs/symbolize_target.c itself with
 * "${CC:-cc} -g -O2" into a temporary directory (argv[1] may name that source; by default it is
 * found beside this file), finds call sites with objdump and the marked lines in the source, and
 * checks the frames, the fallbacks and the warnings. Needs cc and binutils (objdump, strip). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "names.h"
#include "symbolize.h"

#define PLAN 21

static int test_num;
static int test_failed;

__attribute__((format(printf, 2, 3))) static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++test_num);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		test_failed = 1;
}

__attribute__((format(printf, 1, 2), noreturn)) static void bail(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	exit(1);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a, b;

	if (!s)
		return 0;
	a = strlen(s);
	b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static int streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* For system() and popen(): 'path' with embedded quotes escaped. */
static char *shell_quote(const char *s)
{
	char *q = malloc(strlen(s) * 4 + 3), *p = q;

	if (!q)
		bail("out of memory");
	*p++ = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *s;
		}
	}
	*p++ = '\'';
	*p = '\0';
	return q;
}

static void run(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (rc < 0)
		bail("out of memory");
	if (system(cmd) != 0)
		bail("command failed: %s", cmd);
	free(cmd);
}

/* The line of SRC carrying "@mark NAME ". */
static int mark_line(const char *src, const char *name)
{
	char *buf = NULL, *tag;
	size_t cap = 0;
	int line = 0, found = 0;
	FILE *f = fopen(src, "r");

	if (!f)
		bail("cannot read %s", src);
	if (asprintf(&tag, "@mark %s ", name) < 0)
		bail("out of memory");
	while (getline(&buf, &cap, f) > 0) {
		line++;
		if (strstr(buf, tag)) {
			found = line;
			break;
		}
	}
	free(buf);
	free(tag);
	fclose(f);
	if (!found)
		bail("no @mark %s in %s", name, src);
	return found;
}

/* The binutils of the compiler's target: a cross compiler's prefix ("aarch64-linux-gnu-" of
 * aarch64-linux-gnu-gcc, in make check-arm64), where this machine's strip and objdump do not
 * read the program; none for the machine's own. */
static char binutils[128];

static void set_binutils(const char *cc)
{
	const char *base = strrchr(cc, '/') ? strrchr(cc, '/') + 1 : cc;
	size_t n = strcspn(base, " ");
	if (n > 4 && n - 3 < sizeof(binutils) && !strncmp(base + n - 4, "-gcc", 4))
		snprintf(binutils, sizeof(binutils), "%.*s", (int)(n - 3), base);
}

/*
 * From the disassembly of FUNC: its address (callee NULL), or the return address of its first
 * call to CALLEE, i.e. the address of the instruction after the call (x86-64's call, AArch64's
 * bl).
 */
static uint64_t disasm_addr(const char *bin, const char *func, const char *callee)
{
	char *cmd, *qbin, *head, *target, *buf = NULL;
	size_t cap = 0;
	int in_func = 0, after_call = 0;
	uint64_t addr, found = 0;
	FILE *f;

	qbin = shell_quote(bin);
	if (asprintf(&cmd, "%sobjdump -d --no-show-raw-insn %s", binutils, qbin) < 0 ||
	    asprintf(&head, " <%s>:", func) < 0 ||
	    asprintf(&target, "<%s", callee ? callee : "") < 0)
		bail("out of memory");
	f = popen(cmd, "r");
	if (!f)
		bail("cannot run %s", cmd);
	while (!found && getline(&buf, &cap, f) > 0) {
		if (!in_func) {
			if (strstr(buf, head)) {
				in_func = 1;
				if (!callee)
					found = strtoull(buf, NULL, 16);
			}
			continue;
		}
		if (buf[0] == '\n')
			break;
		addr = strtoull(buf, NULL, 16);
		if (after_call)
			found = addr;
		else if ((strstr(buf, "call") || strstr(buf, "\tbl\t")) && strstr(buf, target))
			after_call = 1;
	}
	while (getline(&buf, &cap, f) > 0)
		;
	pclose(f);
	free(buf);
	free(cmd);
	free(qbin);
	free(head);
	free(target);
	if (!found)
		bail("objdump: no %s%s%s in %s", func, callee ? " call to " : "",
		     callee ? callee : "", bin);
	return found;
}

static size_t read_build_id(const char *path, uint8_t *out, size_t max)
{
	const void *bits;
	ssize_t len;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		bail("cannot open %s", path);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	len = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	if (len <= 0 || (size_t)len > max)
		bail("no usable build-id in %s", path);
	memcpy(out, bits, len);
	elf_end(elf);
	close(fd);
	return len;
}

struct warnings {
	char *msg[16];
	int n;
};

static void collect(int kind, const char *path, const char *msg, void *arg)
{
	struct warnings *w = arg;

	(void)kind;
	(void)path;
	if (w->n < 16)
		w->msg[w->n++] = strdup(msg);
}

static struct warnings take_warnings(struct mf_symbolizer *sym)
{
	struct warnings w = {.n = 0};

	mf_sym_warnings(sym, collect, &w);
	return w;
}

static void drop_warnings(struct warnings *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->msg[i]);
	w->n = 0;
}

static int one_warning(struct warnings *w, const char *prefix, const char *text)
{
	return w->n == 1 && w->msg[0] && !strncmp(w->msg[0], prefix, strlen(prefix)) &&
	       strstr(w->msg[0], text);
}

static void print_frames(const struct mf_sym_frame *f, int n)
{
	for (int i = 0; i < n; i++)
		printf("#   %s at %s:%d%s\n", f[i].function, f[i].file ? f[i].file : "??",
		       f[i].line, f[i].inlined ? " (inlined)" : "");
}

static void test_demangle(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"_ZNSt6vectorIiSaIiEE9push_backERKi",
	     "std::vector<int, std::allocator<int> >::push_back(int const&)"},
	    {"_ZN4core3ptr13drop_in_place17h7ea3e3e2e7e2a1b2E", "core::ptr::drop_in_place"},
	    {"_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar"},
	    {"malloc", NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = mf_name_demangle(cases[i].in, NULL);

		if (cases[i].out)
			check(streq(d, cases[i].out), "demangle %s -> %s (got %s)", cases[i].in,
			      cases[i].out, d ? d : "NULL");
		else
			check(!d, "demangle %s -> NULL (got %s)", cases[i].in, d ? d : "NULL");
		free(d);
	}
}

int main(int argc, char **argv)
{
	const struct mf_sym_frame *f, *f2;
	const char *fn0, *fn1;
	char dir_tmpl[] = "/tmp/test_symbolize.XXXXXX";
	char *src, *bin, *nodebug, *qsrc, *qbin, *qnodebug, *expect;
	const char *cc = getenv("CC");
	uint8_t id[64], bad_id[64];
	size_t id_len;
	uint64_t plain_ret, outer_ret, main_addr;
	int plain_line, inline_line, outer_line, n, n2;
	struct mf_symbolizer *sym;
	struct warnings w;

	/* Keep libdw from asking a debuginfod server about the test's own files. */
	unsetenv("DEBUGINFOD_URLS");
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("1..%d\n", PLAN);

	if (argc > 1) {
		src = strdup(argv[1]);
	} else if (getenv("srcdir")) {
		/* make check exports srcdir: the source tree, also in out-of-tree builds */
		if (asprintf(&src, "%s/tests/progs/symbolize_target.c", getenv("srcdir")) < 0)
			src = NULL;
	} else {
		const char *slash = strrchr(__FILE__, '/');
		int dirlen = slash ? (int)(slash - __FILE__ + 1) : 0;

		if (asprintf(&src, "%.*ssymbolize_target.c", dirlen, __FILE__) < 0)
			src = NULL;
	}
	if (!src || !mkdtemp(dir_tmpl) || asprintf(&bin, "%s/symbolize_target", dir_tmpl) < 0 ||
	    asprintf(&nodebug, "%s/symbolize_target.nodebug", dir_tmpl) < 0)
		bail("setup failed");
	qsrc = shell_quote(src);
	qbin = shell_quote(bin);
	qnodebug = shell_quote(nodebug);
	set_binutils(cc && *cc ? cc : "cc");
	run("%s -g -O2 -o %s %s", cc && *cc ? cc : "cc", qbin, qsrc);
	run("%sstrip --strip-debug -o %s %s", binutils, qnodebug, qbin);

	plain_line = mark_line(src, "plain_call");
	inline_line = mark_line(src, "inline_call");
	outer_line = mark_line(src, "outer_call");
	plain_ret = disasm_addr(bin, "plain_alloc", "calloc");
	outer_ret = disasm_addr(bin, "outer_alloc", "malloc");
	main_addr = disasm_addr(bin, "main", NULL);
	id_len = read_build_id(bin, id, sizeof(id));

	test_demangle();

	sym = mf_sym_new();
	if (!sym)
		bail("mf_sym_new failed");

	n = mf_sym_lookup(sym, bin, id, id_len, plain_ret, 1, &f);
	print_frames(f, n);
	check(n == 1 && streq(f[0].function, "plain_alloc") && !f[0].inlined,
	      "plain call: one frame in plain_alloc");
	check(ends_with(f[0].file, "symbolize_target.c") && f[0].line == plain_line,
	      "plain call: at symbolize_target.c:%d", plain_line);

	n = mf_sym_lookup(sym, bin, id, id_len, outer_ret, 1, &f);
	print_frames(f, n);
	check(n == 2, "inlined call: two frames (got %d)", n);
	check(n >= 1 && streq(f[0].function, "inner_alloc") && f[0].inlined == 1 &&
		  ends_with(f[0].file, "symbolize_target.c") && f[0].line == inline_line,
	      "inlined call: inner_alloc at symbolize_target.c:%d, inlined", inline_line);
	check(n >= 2 && streq(f[1].function, "outer_alloc") && f[1].inlined == 0 &&
		  ends_with(f[1].file, "symbolize_target.c") && f[1].line == outer_line,
	      "inlined call: then outer_alloc at symbolize_target.c:%d", outer_line);

	fn0 = n >= 1 ? f[0].function : NULL;
	fn1 = n >= 2 ? f[1].function : NULL;
	n2 = mf_sym_lookup(sym, bin, id, id_len, outer_ret, 1, &f2);
	check(n2 == n && n2 >= 2 && f2[0].function == fn0 && f2[1].function == fn1,
	      "a second lookup gives the same frames, their names interned once");

	n = mf_sym_lookup(sym, bin, NULL, 0, main_addr, 0, &f);
	check(n >= 1 && streq(f[n - 1].function, "main"), "entry of main without build-id: main");

	w = take_warnings(sym);
	check(w.n == 0, "no warnings for a matching file with debug info (got %d)", w.n);
	drop_warnings(&w);

	memcpy(bad_id, id, id_len);
	bad_id[0] ^= 0xff;
	if (asprintf(&expect, "symbolize_target+0x%" PRIx64, outer_ret) < 0)
		bail("out of memory");
	n = mf_sym_lookup(sym, bin, bad_id, id_len, outer_ret, 1, &f);
	check(n == 1 && streq(f[0].function, expect) && !f[0].file && !f[0].line,
	      "wrong build-id: %s (got %s)", expect, f[0].function);
	free(expect);
	mf_sym_lookup(sym, bin, bad_id, id_len, plain_ret, 1, &f);
	w = take_warnings(sym);
	check(one_warning(&w, bin, "build-id differs"), "wrong build-id: one warning");
	drop_warnings(&w);

	n = mf_sym_lookup(sym, "/nonexistent/dir/libgone.so.1", id, id_len, 0x1234, 1, &f);
	check(n == 1 && streq(f[0].function, "libgone.so.1+0x1234") && !f[0].file,
	      "missing file: libgone.so.1+0x1234 (got %s)", f[0].function);
	mf_sym_lookup(sym, "/nonexistent/dir/libgone.so.1", NULL, 0, 0x99, 0, &f);
	w = take_warnings(sym);
	check(one_warning(&w, "/nonexistent/dir/libgone.so.1", "cannot open"),
	      "missing file: one warning");
	drop_warnings(&w);

	n = mf_sym_lookup(sym, "", NULL, 0, 0x10, 1, &f);
	check(n == 1 && streq(f[0].function, "[unknown]+0x10"), "empty path: [unknown]+0x10");
	n = mf_sym_lookup(sym, "[vdso]", NULL, 0, 0x20, 1, &f);
	check(n == 1 && streq(f[0].function, "[vdso]+0x20"), "pseudo-module: [vdso]+0x20");
	w = take_warnings(sym);
	check(w.n == 0, "no warnings for nameless modules (got %d)", w.n);
	drop_warnings(&w);

	n = mf_sym_lookup(sym, nodebug, id, id_len, outer_ret, 1, &f);
	print_frames(f, n);
	check(n == 1 && streq(f[0].function, "outer_alloc") && !f[0].file && !f[0].line,
	      "without debug info: outer_alloc from the symbol table");
	w = take_warnings(sym);
	check(one_warning(&w, nodebug, "no debug info"), "without debug info: one warning");
	drop_warnings(&w);

	mf_sym_free(sym);

	unlink(nodebug);
	unlink(bin);
	rmdir(dir_tmpl);
	free(src);
	free(bin);
	free(nodebug);
	free(qsrc);
	free(qbin);
	free(qnodebug);
	if (test_num != PLAN) {
		printf("# ran %d tests, planned %d\n", test_num, PLAN);
		return 1;
	}
	return test_failed;
}
