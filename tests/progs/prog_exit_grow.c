/* exit() while another thread's file is moving (tests/preload/t_exit_threads.sh): a worker calls
 * site_leaf from ever new stacks, so its file grows without pause. A thread file is mapped in
 * a 16 MiB reservation and moved (mremap) when it grows past it (README, Mappings). main
 * watches the worker's file, read-only, and calls exit() when it is KEEP nodes short of the
 * growth that moves it: exit() then finalizes the worker's file while the worker may move it.
 * Usage: prog_exit_grow KEEP */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "malloc_freq.h"
#include "malloc_freq_format.h"
#include "prog.h"

#pragma weak malloc_freq_dir

#define NOINLINE __attribute__((noinline))
enum { DEPTH = 19, RESERVED = 16 << 20 };

static volatile pid_t worker_tid;
static void *volatile sink;

NOINLINE static void site_leaf(void)
{
	sink = malloc(16);
	free(sink);
}

static void *worker(void *arg)
{
	(void)arg;
	site_leaf();
	worker_tid = (pid_t)syscall(SYS_gettid);
	for (;;)
		for (unsigned path = 0; path < 1u << DEPTH; path++)
			prog_path0(DEPTH, path, site_leaf);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2 || !malloc_freq_dir)
		return 2;
	uint64_t keep = strtoull(argv[1], NULL, 10);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	while (!worker_tid)
		;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%d.prof", malloc_freq_dir(), (int)worker_tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	const struct mf_prof_header *h = mmap(NULL, MF_HEADER_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return 1;
	/* Its capacity doubles: it moves when it fills the largest that fits the reservation. */
	uint64_t last = 1;
	while (MF_HEADER_SIZE + 2 * last * sizeof(struct mf_node) <= RESERVED)
		last *= 2;
	while (__atomic_load_n(&h->node_count, __ATOMIC_RELAXED) + keep < last)
		;
	exit(0);
}
