/* Finding profile directories (see discover.h): names are listed and sorted in version order,
 * so malloc_freq.9 comes before malloc_freq.10 and an exec'd image's .1 after its first. */
#define _GNU_SOURCE /* strverscmp */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "discover.h"
#include "pack.h"
#include "snapshots.h"

static int mf_name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static void mf_free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Lists entries of dir whose names end in suffix (".prof") or start with prefix. */
static int mf_list(const char *dir, const char *suffix, const char *prefix, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	char **names = NULL;
	size_t count = 0, cap = 0;
	struct dirent *e;
	int r = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
		int match = suffix ? len > sl && !strcmp(e->d_name + len - sl, suffix)
				   : !strncmp(e->d_name, prefix, strlen(prefix));
		if (!match)
			continue;
		char **v = mf_array_room(names, count, &cap, sizeof(*v));
		if (!v) {
			r = -ENOMEM;
			break;
		}
		names = v;
		if (!(names[count] = strdup(e->d_name))) {
			r = -ENOMEM;
			break;
		}
		count++;
	}
	closedir(d);
	if (r) {
		mf_free_names(names, count);
		return r;
	}
	if (count)
		qsort(names, count, sizeof(*names), mf_name_cmp);
	*out = names;
	*n = count;
	return 0;
}

/* Whether dir's pack holds the threads its newest snapshot says were packed before it (the
 * records below its pack_len): 0; 1 if not (said). */
static int mf_list_pack_whole(const char *dir)
{
	char name[NAME_MAX + 1], err[PATH_MAX + 512];
	struct mf_snapshot_record rec;
	const struct mf_pack *pk;
	return !mf_snapshot_newest(dir, name, sizeof(name), &rec, err, sizeof(err)) &&
	       rec.version >= 12 && mf_pack_upto(dir, rec.pack_len, rec.number, &pk);
}

/* The thread files of profile directory dir, its packed threads' among them (pack.h), in
 * version order: 0; 1 when its pack's records end early or before its newest snapshot's
 * pack_len (said, the rest listed); -errno. */
static int mf_list_profiles(const char *dir, char ***out, size_t *n)
{
	int r = mf_list(dir, ".prof", NULL, out, n), lost = r ? 0 : mf_list_pack_whole(dir);
	if (!r)
		r = mf_pack_add_names(dir, out, n);
	if (!r)
		r = lost;
	if (r < 0) {
		mf_free_names(*out, *n);
		*out = NULL, *n = 0;
		return r;
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), mf_name_cmp);
	return r;
}

/* Takes names (n of them) as the .prof files of dir (st: its stat; link: reached through a
 * link), unless it is among those from list->v[from] on already (those found in the same
 * directory): then the one reached without a link is kept, and the other named. */
static int mf_found_add(struct mf_found_list *list, size_t from, const char *dir, char **names,
			size_t n, const struct stat *st, int link)
{
	for (size_t i = from; i < list->count; i++) {
		struct mf_found *f = &list->v[i];
		if (f->dev != st->st_dev || f->ino != st->st_ino)
			continue;
		mf_free_names(names, n); /* (the same files as f's) */
		char *kept = f->link && !link ? strdup(dir) : NULL;
		if (f->link && !link && !kept)
			return -ENOMEM;
		fprintf(stderr, "mf_print: warning: %s: the same directory as %s; read once\n",
			kept ? f->dir : dir, kept ? dir : f->dir);
		if (kept) {
			free(f->dir);
			f->dir = kept;
			f->link = 0;
		}
		return 0;
	}
	struct mf_found *v = mf_array_room(list->v, list->count, &list->capacity, sizeof(*v));
	char *copy = v ? strdup(dir) : NULL;
	if (!copy) {
		if (v)
			list->v = v;
		mf_free_names(names, n);
		return -ENOMEM;
	}
	list->v = v;
	list->v[list->count++] = (struct mf_found){copy, names, n, st->st_dev, st->st_ino, link};
	return 0;
}

static void mf_discover_error(const char *arg, const char *what)
{
	fprintf(stderr, "mf_print: %s: %s\n", arg, what);
}

int mf_discover(struct mf_found_list *list, const char *arg)
{
	struct stat st;
	if (stat(arg, &st)) {
		mf_discover_error(arg, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		mf_discover_error(
		    arg, "not a directory (give the malloc_freq.<pid> directory, not a file)");
		return 1;
	}
	char **names = NULL;
	size_t n = 0;
	int r = mf_list_profiles(arg, &names, &n), damaged = r == 1;
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		mf_discover_error(arg, strerror(-r));
		return 1;
	}
	if (n)
		return (r = mf_found_add(list, list->count, arg, names, n, &st, 0)) ? r : damaged;
	free(names);
	/* A directory of profile directories: a process tree, or several runs. */
	char **subs = NULL;
	size_t ns = 0;
	if ((r = mf_list(arg, NULL, "malloc_freq.", &subs, &ns)))
		return r == -ENOMEM ? r : 0;
	size_t before = list->count;
	int failed = 0;
	char path[PATH_MAX];
	for (size_t i = 0; i < ns && r != -ENOMEM; i++) {
		snprintf(path, sizeof(path), "%s/%s", arg, subs[i]);
		struct stat lst;
		if (lstat(path, &lst) || stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		if ((r = mf_list_profiles(path, &names, &n)) < 0) {
			if (r != -ENOMEM)
				mf_discover_error(path, strerror(-r));
			failed = 1;
			continue;
		}
		failed |= r;
		if (n)
			r = mf_found_add(list, before, path, names, n, &st, S_ISLNK(lst.st_mode));
		else
			free(names);
	}
	mf_free_names(subs, ns);
	if (r == -ENOMEM)
		return r;
	if (list->count == before && !failed) {
		mf_discover_error(arg, "no profiles here (no *.prof files, no malloc_freq.* "
				       "directories holding them)");
		return 1;
	}
	return failed;
}

int mf_discover_profiles(const char *dir, char ***names, size_t *n)
{
	*names = NULL;
	*n = 0;
	int r = mf_list_profiles(dir, names, n);
	return r > 0 ? 0 : r;
}

void mf_found_free(struct mf_found_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		free(list->v[i].dir);
		mf_free_names(list->v[i].profiles, list->v[i].nprofiles);
	}
	free(list->v);
	memset(list, 0, sizeof(*list));
}
