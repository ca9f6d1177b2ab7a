/* Shared by the fuzzer and the robustness test: runs one input through everything mf_print
 * does with a file (parse, module check, the model, every report) and returns what the parser
 * said: 0 accepted, -1 rejected with a message in err. Must never crash, hang or leak. */
#ifndef MF_READER_EXERCISE_H
#define MF_READER_EXERCISE_H

#include <stdio.h>
#include <string.h>

#include "../mf_print/model.h"
#include "../mf_print/reader.h"
#include "../mf_print/report.h"

#define MF_EXERCISE_MODULES 64

static void mf_exercise_reports(struct mf_profile *p, const struct mf_modmap *map, FILE *null)
{
	struct mf_symbolizer *sym = mf_sym_new();
	struct mf_model m = {0};
	uint32_t process;
	if (sym && mf_model_init(&m, sym) == 0 &&
	    mf_model_add_process(&m, &(struct mf_process){.pid = p->header.pid, .name = "input"},
				 &process) == 0 &&
	    mf_model_add_modules(&m, process, map) == 0 &&
	    mf_model_add_thread(&m, process, p) == 0) {
		for (int variant = 0; variant < 2; variant++) {
			struct mf_report_options o = {.threshold = variant ? 0.0 : 1.0,
						      .metric = variant ? MF_METRIC_BYTES
									: MF_METRIC_CALLS,
						      .lines = variant,
						      .full_names = variant,
						      .files = 1,
						      .dirs = 1};
			mf_report_summary(null, &m, &o);
			mf_report_tree(null, &m, &o);
			mf_report_caller(null, &m, &o);
			mf_report_threads(null, &m, &o);
			mf_report_collapsed(null, &m, &o);
		}
	}
	mf_model_free(&m);
	if (sym)
		mf_sym_free(sym);
}

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
	if (mf_profile_check_modules(&p, map.count, err, errlen) == 0)
		mf_exercise_reports(&p, &map, null);
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
