/* A program that confines itself with a seccomp filter (after PR_SET_NO_NEW_PRIVS), having
 * called site_main 100 times before:
 *   kill      prctl(PR_SET_SECCOMP): open, openat, openat2, mkdir, mkdirat, fallocate and the
 *             renames kill the process; then 4 threads call site_thread 1000 times each, and
 *             the program exits 5
 *   killsys   the same, installed with syscall(SYS_seccomp) as libseccomp does
 *   vmreadv   process_vm_readv fails with EPERM; then a thread calls site_vm 1000 times
 *             through call paths 0 to 7 frames deep (stacks, and stack pages, new to the
 *             profiler); exits 0
 *   eperm     the file calls of kill fail with EPERM instead; then 8 threads call
 *             site_thread 8000 times each (64000 calls); exits 0
 * or with a filter the kernel refuses, then 4 threads call site_thread 1000 times each (exits
 * 0, each refusal printed with its result and errno name):
 *   badptr    at addresses it cannot read: (void *)8, a struct sock_fprog in a PROT_NONE page,
 *             and one whose instructions lie there, through prctl and syscall (EFAULT)
 *   einval    one that loads beyond struct seccomp_data (EINVAL), through both
 *   eacces    the kill filter without PR_SET_NO_NEW_PRIVS (EACCES unless CAP_SYS_ADMIN)
 * Prints what it did. Usage: prog_seccomp MODE */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prog.h"

SITE(site_main, 8)
SITE(site_thread, 16)
SITE(site_vm, 24)

static const int file_calls[] = {SYS_open,	SYS_openat, SYS_openat2,  SYS_mkdir,	SYS_mkdirat,
				 SYS_fallocate, SYS_rename, SYS_renameat, SYS_renameat2};
static const int vm_calls[] = {SYS_process_vm_readv};

/* A filter that answers the n system calls in nr with action, and allows all others, in f;
 * its length. */
static int filter(struct sock_filter *f, const int *nr, int n, unsigned action)
{
	int k = 0;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (int i = 0; i < n; i++) /* to the action, n - i instructions on */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr[i],
						      (unsigned char)(n - i), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
	return k;
}

static int confine(const int *nr, int n, unsigned action, int with_syscall)
{
	struct sock_filter f[64];
	struct sock_fprog prog = {(unsigned short)filter(f, nr, n, action), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (with_syscall)
		return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static long per_thread;

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_thread; i++)
		site_thread();
	return NULL;
}

static void *vm_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		prog_rec(i % 8, site_vm);
	return NULL;
}

static int threads(int n, long calls, void *(*fn)(void *))
{
	pthread_t t[8];
	per_thread = calls;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, NULL))
			return -1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* ---- filters the kernel refuses ---- */

/* One install through prctl (with_syscall 0) or syscall, printed as "how: result ERRNO". */
static void refused(const char *how, const void *prog, int with_syscall)
{
	errno = 0;
	long r = with_syscall ? syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog)
			      : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0);
	printf("%s %s: %ld %s\n", how, with_syscall ? "syscall" : "prctl", r,
	       r ? strerrorname_np(errno) : "");
}

static int refuse(const char *mode)
{
	const int nfile = sizeof(file_calls) / sizeof(file_calls[0]);
	struct sock_filter f[64];
	struct sock_fprog prog = {
	    (unsigned short)filter(f, file_calls, nfile, SECCOMP_RET_KILL_PROCESS), f};
	if (strcmp(mode, "eacces") && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	for (int sys = 0; sys < 2; sys++) {
		if (!strcmp(mode, "badptr")) {
			struct sock_fprog *none =
			    mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			struct sock_fprog unreadable = {prog.len, (struct sock_filter *)none};
			refused("(void *)8", (void *)8, sys);
			refused("fprog in PROT_NONE", none, sys);
			refused("filter in PROT_NONE", &unreadable, sys);
		} else if (!strcmp(mode, "einval")) {
			f[0].k = 1000; /* (beyond struct seccomp_data) */
			refused("load at 1000", &prog, sys);
		} else {
			refused("no NO_NEW_PRIVS", &prog, sys);
		}
	}
	fflush(stdout);
	return threads(4, 1000, worker);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const int nfile = sizeof(file_calls) / sizeof(file_calls[0]);
	for (int i = 0; i < 100; i++)
		site_main();
	if (!strcmp(mode, "kill") || !strcmp(mode, "killsys")) {
		if (confine(file_calls, nfile, SECCOMP_RET_KILL_PROCESS, mode[4] == 's') ||
		    threads(4, 1000, worker))
			return 3;
		printf("%s: 4 threads done\n", mode);
		fflush(stdout);
		return 5;
	}
	if (!strcmp(mode, "vmreadv")) {
		if (confine(vm_calls, 1, SECCOMP_RET_ERRNO | EPERM, 0) || threads(1, 0, vm_worker))
			return 3;
		puts("vmreadv: 1000 calls");
		return 0;
	}
	if (!strcmp(mode, "eperm")) {
		if (confine(file_calls, nfile, SECCOMP_RET_ERRNO | EPERM, 0) ||
		    threads(8, 8000, worker))
			return 3;
		puts("eperm: 8 threads done");
		return 0;
	}
	if (!strcmp(mode, "badptr") || !strcmp(mode, "einval") || !strcmp(mode, "eacces")) {
		if (refuse(mode))
			return 3;
		printf("%s: 4 threads done\n", mode);
		return 0;
	}
	return 2;
}
