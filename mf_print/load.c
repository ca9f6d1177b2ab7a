/* Reading discovered profile directories into the model (see load.h). A profile is read,
 * added and freed before the next, so memory holds one file at a time besides the model. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "reader.h"

#define MF_PLACEHOLDER_MODULES_MAX 65536

static void mf_error(const char *what, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "mf_print: %s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A map for a directory without a readable one: "[module N]" entries, never opened. */
static int mf_placeholder_map(struct mf_modmap *m, uint32_t need)
{
	if (need <= m->count)
		return 0;
	if (need > MF_PLACEHOLDER_MODULES_MAX)
		return -1;
	struct mf_module *mods = realloc(m->mods, (size_t)need * sizeof(*mods));
	if (!mods)
		return -1;
	for (uint32_t i = m->count; i < need; i++) {
		memset(&mods[i], 0, sizeof(mods[i]));
		snprintf(mods[i].path, sizeof(mods[i].path), "[module %u]", i);
	}
	m->mods = mods;
	m->count = need;
	return 0;
}

/* The program's name: its executable's base name (module 0), else "pid N". */
static void mf_program_name(char *buf, size_t size, const struct mf_modmap *map, uint64_t pid)
{
	const char *path = map->count ? map->mods[0].path : "";
	const char *slash = strrchr(path, '/');
	if (path[0] == '/' && slash[1])
		snprintf(buf, size, "%s", slash + 1);
	else
		snprintf(buf, size, "pid %llu", (unsigned long long)pid);
}

int mf_load_dir(struct mf_model *m, const struct mf_found *found, struct mf_load *ld)
{
	char path[PATH_MAX], err[512], name[256];
	const char *dir = found->dir;
	struct mf_modmap map;
	uint32_t process = MF_NONE;
	int r = 0;
	ld->dirs++;
	snprintf(path, sizeof(path), "%s/modules", dir);
	int have_map = mf_read_modules(path, &map, err, sizeof(err)) == 0;
	if (!have_map) {
		fprintf(stderr, "mf_print: warning: %s: %s; frames are shown as module+offset\n",
			path, err);
		ld->failed |= errno != ENOENT;
	}
	for (size_t i = 0; i < found->nprofiles && !r; i++) {
		struct mf_profile p;
		snprintf(path, sizeof(path), "%s/%s", dir, found->profiles[i]);
		ld->files++;
		int rp = mf_read_profile(path, &p, err, sizeof(err));
		if (rp > 0) {
			fprintf(stderr, "mf_print: warning: %s: %s\n", path, err);
			continue;
		}
		if (rp < 0) {
			mf_error(path, "%s", err);
			ld->failed = 1;
			continue;
		}
		if (!have_map) {
			uint32_t need = 0;
			for (uint64_t k = 1; k < p.node_count; k++)
				if (p.nodes[k].module < MF_MODULE_MAX && p.nodes[k].module >= need)
					need = p.nodes[k].module + 1;
			if (mf_placeholder_map(&map, need)) {
				mf_error(path, "names module %u and there is no module map",
					 need - 1);
				ld->failed = 1;
				mf_profile_free(&p);
				continue;
			}
		}
		if (mf_profile_check_modules(&p, map.count, err, sizeof(err))) {
			mf_error(path, "%s", err);
			ld->failed = 1;
		} else if (!ld->have_thread || p.header.tid == ld->thread) {
			if (process == MF_NONE) {
				mf_program_name(name, sizeof(name), &map, p.header.pid);
				r = mf_model_add_process(m, p.header.pid, dir, name, &process);
			}
			if (!r)
				r = mf_model_add_modules(m, process, &map);
			if (!r)
				r = mf_model_add_thread(m, process, &p);
			ld->threads += !r;
		}
		mf_profile_free(&p);
	}
	mf_modmap_free(&map);
	return r;
}
