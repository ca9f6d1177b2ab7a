/* Shared by the fuzzer and the robustness test: runs one input through everything mf_print
 * does with a file (parse, module check, the model, every report) and returns what the parser
 * said: 0 accepted, -1 rejected with a message in err. Must never crash, hang or leak. The
 * first byte of an input says its kind: 3 a process record, other odd values a module map,
 * 6 (modulo 8) a pack of ended threads' files (with 8 set too: its records' checks made to
 * match first), other even ones a thread profile. */
#ifndef MF_READER_EXERCISE_H
#define MF_READER_EXERCISE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../mf_print/load.h"
#include "../../mf_print/model.h"
#include "../../mf_print/pack.h"
#include "../../mf_print/reader.h"
#include "../../mf_print/report.h"

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
	    mf_model_add_thread(&m, process, p) == 0 && mf_model_finish(&m) == 0) {
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
	static struct mf_modmap map = {.count = MF_EXERCISE_MODULES, .mods = mods};
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

/* A process record: parsed, then reported on as the process of a small profile, beside
 * another program (the reports of processes, programs, threads, and rooted trees). */
static int mf_exercise_process(const unsigned char *data, size_t size, char *err, size_t errlen)
{
	static struct mf_process_record rec;
	static char cmdline[MF_CMDLINE_LEN + 1];
	static struct mf_module mods[1] = {{.path = "[module 0]"}};
	static const struct mf_modmap map = {.count = 1, .mods = mods};
	static FILE *null;
	struct mf_node nodes[3] = {
	    {0},
	    {.rel_pc = 0x10, .module = 0},
	    {.parent = 1, .module = MF_MODULE_ENTRY, .calls = 3, .bytes = 30}};
	struct mf_profile p = {.path = (char *)"input", .node_count = 3, .nodes = nodes};
	err[0] = 0;
	if (!null)
		null = fopen("/dev/null", "w");
	if (mf_parse_process(data, size, &rec, err, errlen))
		return -1;
	struct mf_process info = {0}, other = {.pid = 1, .name = "other"};
	mf_load_process_info(&info, &rec, cmdline);
	info.name = rec.exe[0] ? rec.exe : "input";
	struct mf_symbolizer *sym = mf_sym_new();
	struct mf_model m = {0};
	uint32_t id[2];
	p.header.sample_rate = 1;
	if (sym && mf_model_init(&m, sym) == 0 && mf_model_add_process(&m, &info, &id[0]) == 0 &&
	    mf_model_add_process(&m, &other, &id[1]) == 0 &&
	    mf_model_add_modules(&m, id[0], &map) == 0 &&
	    mf_model_add_modules(&m, id[1], &map) == 0 && mf_model_add_thread(&m, id[0], &p) == 0 &&
	    mf_model_add_thread(&m, id[1], &p) == 0 && mf_model_finish(&m) == 0) {
		struct mf_report_options o = {.threshold = 0, .files = 2, .dirs = 2};
		mf_report_summary(null, &m, &o);
		mf_report_programs(null, &m, &o);
		mf_report_processes(null, &m, &o);
		mf_report_threads(null, &m, &o);
		mf_report_tree(null, &m, &o);
		mf_report_collapsed(null, &m, &o);
	}
	mf_model_free(&m);
	if (sym)
		mf_sym_free(sym);
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

/* The records of a pack at p given the checks they should have, in order up to the first whose
 * sizes do not fit: so that a fuzzer, which cannot forge a check, reaches what the reader does
 * past it (the record's name, version, header). */
static void mf_exercise_pack_seal(unsigned char *p, size_t size)
{
	struct mf_pack_record rec;
	for (size_t at = 0; size - at >= sizeof(rec);) {
		memcpy(&rec, p + at, sizeof(rec));
		if (rec.header_len % 8 || rec.nodes_len % 8 || rec.header_len > size ||
		    rec.nodes_len > size ||
		    size - at - sizeof(rec) < rec.header_len + rec.nodes_len)
			break;
		size_t len = sizeof(rec) + rec.header_len + rec.nodes_len;
		rec.check = 0;
		memcpy(p + at, &rec, sizeof(rec));
		rec.check = mf_hash_words(1, p + at, len);
		memcpy(p + at, &rec, sizeof(rec));
		at += len;
	}
}

/* A pack (ended.pack): its records read (sealed first: mf_exercise_pack_seal), each whole
 * one's thread reported on as a file's. */
static int mf_exercise_pack(const unsigned char *input, size_t size, int seal, char *err,
			    size_t errlen)
{
	unsigned char *copy = seal ? malloc(size ? size : 1) : NULL;
	const unsigned char *data = input;
	if (seal && !copy)
		return snprintf(err, errlen, "out of memory"), -1;
	if (seal) {
		memcpy(copy, input, size);
		mf_exercise_pack_seal(copy, size);
		data = copy;
	}
	static struct mf_module mods[MF_EXERCISE_MODULES];
	static struct mf_modmap map = {.count = MF_EXERCISE_MODULES, .mods = mods};
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	struct mf_pack pk;
	err[0] = 0;
	if (mf_pack_parse(data, size, &pk)) {
		free(copy);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	for (size_t i = 0; i < pk.n; i++) {
		struct mf_profile p;
		if (mf_pack_profile(&pk, &pk.v[i], "input", &p, err, errlen))
			continue;
		if (mf_profile_check_modules(&p, map.count, err, errlen) == 0)
			mf_exercise_reports(&p, &map, null);
		mf_profile_free(&p);
	}
	int bad = pk.damage[0] != 0;
	if (bad)
		snprintf(err, errlen, "%s", pk.damage);
	mf_pack_free(&pk);
	free(copy);
	return bad ? -1 : 0;
}

static int mf_exercise(const unsigned char *d, size_t n, char *err, size_t errlen)
{
	if (n < 1)
		return 0;
	if ((d[0] & 7) == 6)
		return mf_exercise_pack(d + 1, n - 1, d[0] & 8, err, errlen);
	if ((d[0] & 3) == 3)
		return mf_exercise_process(d + 1, n - 1, err, errlen);
	return d[0] & 1 ? mf_exercise_modules(d + 1, n - 1, err, errlen)
			: mf_exercise_profile(d + 1, n - 1, err, errlen);
}

#endif
