/* Finding profile directories: a malloc_freq.<pid> directory named on the command line, or
 * the malloc_freq.* directories inside one (a process tree: fork, exec, a build). Reads no
 * profile; says on stderr what it cannot use. */
#ifndef MF_DISCOVER_H
#define MF_DISCOVER_H

#include <stddef.h>
#include <sys/types.h>

struct mf_found {
	char *dir;	 /* a malloc_freq.<pid>[.<n>] directory, as the command line reached it */
	char **profiles; /* its <tid>[.<n>].prof file names, in version order */
	size_t nprofiles;
	dev_t dev; /* the directory itself: one found twice in a directory (a link to it beside
		      it) is read once */
	ino_t ino;
	int link; /* reached through a symbolic link in a directory of directories */
};

struct mf_found_list {
	struct mf_found *v;
	size_t count, capacity;
};

/* Adds the profile directories of arg (one, or those inside it) to list, in version order;
 * of those inside it, one reached twice (by device and inode: a link to one beside it) is
 * added once, and a warning names the other name. (The same directory given twice, as two
 * args, is read twice: merged, it counts double.) Returns 0; 1 after an error naming arg on
 * stderr (missing, not a directory, unreadable, no profiles in it); -ENOMEM. */
int mf_discover(struct mf_found_list *list, const char *arg);
void mf_found_free(struct mf_found_list *list);
/* The .prof file names in dir, in version order (free each and the array). 0 or -errno. */
int mf_discover_profiles(const char *dir, char ***names, size_t *n);

#endif
