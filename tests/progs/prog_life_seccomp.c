/* Blocks freed by another thread under a seccomp filter that kills the process at a
 * membarrier() (tests/preload/t_life_seccomp.sh): a producer thread allocates N blocks at
 * site_handed and goes on allocating and freeing blocks at site_temp until a consumer thread
 * has freed all N, so the consumer's frees meet a table its owner is using. MODE:
 *   none  no filter
 *   now   the two threads are made and allocate a block each (the profiler makes their files),
 *         then the filter is installed on every thread (seccomp(SECCOMP_SET_MODE_FILTER,
 *         SECCOMP_FILTER_FLAG_TSYNC) through syscall()), then they start
 *   exec  the filter is installed (prctl(PR_SET_SECCOMP)), then the program runs itself
 *         again ("run"): the profiler starts under it
 * Prints "handed N, temporaries M". Usage: prog_life_seccomp MODE N */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prog_handoff.h"

#ifndef __NR_membarrier
#error "no membarrier system call number"
#endif

static long n;
static void **handed;
static int ready, go, done;
static long temporaries;

static void *produce(void *arg)
{
	(void)arg;
	site_temp(0);
	__atomic_add_fetch(&ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	for (long i = 0; i < n; i++)
		__atomic_store_n(&handed[i], site_handed(i), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		site_temp(temporaries++);
	return NULL;
}

static void *consume(void *arg)
{
	(void)arg;
	site_temp(0);
	__atomic_add_fetch(&ready, 1, __ATOMIC_RELEASE);
	for (long i = 0; i < n; i++) {
		void *p;
		while (!(p = __atomic_load_n(&handed[i], __ATOMIC_ACQUIRE)))
			;
		free(p);
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void confine(int tsync)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    (tsync ? syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)
		   : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))) {
		perror("prog_life_seccomp: seccomp filter");
		exit(3);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "none") && strcmp(argv[1], "now") &&
			  strcmp(argv[1], "exec") && strcmp(argv[1], "run"))) {
		fprintf(stderr, "usage: prog_life_seccomp none|now|exec N\n");
		return 2;
	}
	n = atol(argv[2]);
	if (!strcmp(argv[1], "exec")) {
		confine(0);
		execl("/proc/self/exe", argv[0], "run", argv[2], (char *)NULL);
		perror("prog_life_seccomp: exec");
		return 3;
	}
	handed = calloc((size_t)n, sizeof(*handed));
	pthread_t p, c;
	pthread_create(&p, NULL, produce, NULL);
	pthread_create(&c, NULL, consume, NULL);
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 2)
		;
	if (!strcmp(argv[1], "now"))
		confine(1);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	pthread_join(c, NULL);
	pthread_join(p, NULL);
	free(handed);
	printf("handed %ld, temporaries %ld\n", n, temporaries);
	return 0;
}
