/* Shared by the fuzzer and the robustness test: runs one input through everything mf_print
 * does with a file (parse, module check, stacks, every report) and returns what the parser
 * said: 0 accepted, -1 rejected with a message in err. Must never crash, hang or leak. */
#ifndef MF_READER_EXERCISE_H
#define MF_READER_EXERCISE_H

#include <stdio.h>
#include <string.h>

#include "../mf_print/reader.h"
#include "../mf_print/report.h"
#include "../mf_print/stacks.h"

#define MF_EXERCISE_MODULES 64

static int mf_exercise_profile(const unsigned char *data, size_t size, char *err, size_t errlen)
{
	static struct mf_module mods[MF_EXERCISE_MODULES];
	static struct mf_modmap map = {MF_EXERCISE_MODULES, mods};
	static FILE *null;
	if (!null) {
		null = fopen("/dev/null", "w");
		for (int i = 0; i < MF_EXERCISE_MODULES; i++)
			snprintf(mods[i].path, sizeof(mods[i].path), "[module %d]", i);
	}
	struct mf_profile p;
	err[0] = 0;
	if (mf_parse_profile(data, size, "input", &p, err, errlen))
		return -1;
	if (mf_profile_check_modules(&p, map.count, err, errlen) == 0) {
		p.modules = &map;
		struct mf_symbolizer *sym = mf_sym_new();
		for (int style = 0; style < 2 && sym; style++) {
			struct mf_stackset set;
			struct mf_report_options o = {
			    .threshold = style ? 0.0 : 1.0, .files = 1, .dirs = 1};
			if (mf_stacks_build(&set, &p, 1, sym, style, style) == 0) {
				mf_report_summary(null, &set, &o);
				mf_report_tree(null, &set, &o);
				o.caller_first = 1;
				o.by_bytes = 1;
				mf_report_tree(null, &set, &o);
				mf_report_threads(null, &set, &o);
				mf_report_collapsed(null, &set, style);
			}
			mf_stacks_free(&set);
		}
		if (sym)
			mf_sym_free(sym);
	}
	mf_profile_free(&p);
	return 0;
}

static int mf_exercise_modules(const unsigned char *data, size_t size, char *err, size_t errlen)
{
	struct mf_modmap m;
	err[0] = 0;
	if (mf_parse_modules(data, size, &m, err, errlen))
		return -1;
	mf_modmap_free(&m);
	return 0;
}

#endif
