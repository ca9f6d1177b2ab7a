/* A process whose identity or root changes after it started recording (run as root): main
 * calls site_before 1000 times, then
 *   drop        setresgid/setresuid(65534): 4 threads call site_thread 2500 times each
 *               (10000), while main calls site_grow 5 times through each of 300 call paths
 *               (1500 calls on stacks new to it: its trie must grow)
 *   chroot DIR  chroot(DIR) and chdir("/"): 4 threads call site_thread 1250 times each (5000)
 *   chroot-close DIR   the same, but first closes every descriptor from 3 up
 *   chroot-dup DIR     the same, but first puts the new root's directory at descriptors 100
 *                      to 103 (where the profiler keeps its own)
 * Prints what it did. Usage: prog_identity drop | prog_identity chroot[-close|-dup] DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prog.h"
#include "prog_glibc.h"

SITE(site_before, 8)
SITE(site_thread, 16)
SITE(site_grow, 24)

static int per_thread;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < per_thread; i++)
		site_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	for (int i = 0; i < 1000; i++)
		site_before();
	if (!strcmp(mode, "drop")) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			return 3;
		per_thread = 2500;
	} else if (!strncmp(mode, "chroot", 6) && argc > 2) {
		if (chroot(argv[2]) || chdir("/"))
			return 3;
		if (!strcmp(mode, "chroot-close") && syscall(SYS_close_range, 3, ~0u, 0))
			return 3;
		if (!strcmp(mode, "chroot-dup")) {
			int root = open("/", O_RDONLY | O_DIRECTORY);
			for (int fd = 100; fd < 104; fd++)
				if (root < 0 || dup2(root, fd) != fd)
					return 3;
			close(root);
		}
		per_thread = 1250;
	} else {
		return 2;
	}
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 4;
	if (!strcmp(mode, "drop"))
		for (int d = 0; d < 300; d++)
			for (int i = 0; i < 5; i++)
				prog_rec(d, site_grow);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%s: %d thread calls\n", mode, 4 * per_thread);
	return 0;
}
