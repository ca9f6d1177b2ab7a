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
 * or in seccomp strict mode (no system call but read, write, exit and sigreturn), after
 * site_main's 100 calls and site_keep's 50 blocks (kept), making STRICT_CALLS calls of every
 * entry point there, then freeing the kept blocks:
 *   strict       the main thread, by prctl(PR_SET_SECCOMP); ends with exit(2), status 0
 *   strictsys    the same by syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL)
 *   strictexit   by prctl, then exit(0): stdout is flushed, then the kernel kills the
 *                process at exit_group (status 137)
 *   strictthread a second thread, named "confined", after site_thread's 100 calls: by prctl,
 *                on a signal stack the main thread's SIGNALS signals' handler allocates
 *                (each once), the thread allocates until they are handled (N calls), and
 *                returns (the kernel kills it as glibc ends it); then site_main 100 more
 *                times, exits 0. Says on stderr "prog_seccomp: M calls in strict mode"
 *                (STRICT_CALLS + N + SIGNALS).
 * Prints what it did. Usage: prog_seccomp MODE */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prog.h"
#include "prog_glibc.h"

SITE(site_main, 8)
SITE(site_thread, 16)
SITE(site_vm, 24)

static const int file_calls[] = {
#ifdef SYS_open /* (AArch64 has only the *at forms) */
    SYS_open,	 SYS_mkdir,   SYS_rename,
#endif
    SYS_openat,	 SYS_mkdirat, SYS_fallocate, SYS_renameat, SYS_renameat2,
#ifdef SYS_openat2 /* (Linux 5.6: older headers lack it, and glibc makes no openat2 then) */
    SYS_openat2,
#endif
};
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

/* ---- seccomp strict mode ---- */

#define KEPT	      50
#define STRICT_ROUNDS 10
#define STRICT_CALLS  (9 * STRICT_ROUNDS + 1)
#define SIGNALS	      200

static void *kept[KEPT];

__attribute__((noinline)) static void site_keep(int i)
{
	kept[i] = malloc(32);
}

static int strict_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	prog_sink = malloc(56);
	free(prog_sink);
	return 1; /* (the first object only: profiled, there are more) */
}

/* In strict mode: STRICT_CALLS calls, every entry point's, their blocks freed (all small: the
 * heap has room, and no free gives it back), one of them in a dl_iterate_phdr callback, and a
 * dlclose of a library opened twice (it unloads nothing); then the kept blocks freed. */
static void strict_calls(void *lib)
{
	for (int r = 0; r < STRICT_ROUNDS; r++) {
		void *p = malloc(24), *q = calloc(3, 40), *a, *b, *c, *d, *e;
		p = realloc(p, 200);
		q = reallocarray(q, 10, 40);
		if (posix_memalign(&a, 64, 100))
			a = NULL;
		b = aligned_alloc(256, 512);
		c = memalign(4096, 100);
		d = valloc(300);
		e = pvalloc(100);
		free(p), free(q), free(a), free(b), free(c), free(d), free(e);
	}
	dl_iterate_phdr(strict_cb, NULL);
	dlclose(lib);
	for (int i = 0; i < KEPT; i++)
		free(kept[i]);
}

static void say(const char *s)
{
	(void)!write(1, s, strlen(s));
}

/* Enters strict mode with prctl or (with_syscall) syscall: 0, or -1. */
static int strict(int with_syscall)
{
	void *lib = dlopen("libm.so.6", RTLD_NOW);
	if (!lib || !dlopen("libm.so.6", RTLD_NOW))
		return -1;
	for (int i = 0; i < KEPT; i++)
		site_keep(i);
	if (with_syscall ? syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL)
			 : prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		return -1;
	strict_calls(lib);
	return 0;
}

static volatile int strict_ready, strict_handled;
static long strict_loops;

static void strict_handler(int sig)
{
	(void)sig;
	void *p = malloc(100); /* (not 8's bin: the loop's allocation it interrupts is not there) */
	free(p);
	strict_handled++;
}

static void *strict_thread(void *stack)
{
	/* (its own name, before strict mode: named by main after pthread_create, it could enter
	 * strict mode first on a busy machine, under the name it was born with) */
	pthread_setname_np(pthread_self(), "confined");
	for (int i = 0; i < 100; i++)
		site_thread();
	free(malloc(100)); /* (the handler's bin holds a block: it takes no arena lock) */
	stack_t ss = {.ss_sp = stack, .ss_size = 64 << 10};
	struct sigaction sa = {.sa_handler = strict_handler, .sa_flags = SA_ONSTACK};
	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL) || strict(0))
		return (void *)1;
	strict_ready = 1;
	while (strict_handled < SIGNALS) {
		prog_sink = malloc(8);
		free(prog_sink);
		strict_loops++;
	}
	return NULL; /* (glibc's end of the thread makes a system call: the kernel kills it) */
}

/* The second thread's strict mode, on a signal stack above its own (mapped first), so that a
 * handler's call inside the profiler's lies above the call it interrupted. */
static int strict_in_thread(void)
{
	void *stack =
	    mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t t;
	if (stack == MAP_FAILED || pthread_create(&t, NULL, strict_thread, stack))
		return -1;
	while (!strict_ready)
		sched_yield();
	for (int i = 0; i < SIGNALS; i++) {
		pthread_kill(t, SIGUSR1);
		while (strict_handled == i)
			sched_yield();
	}
	pthread_join(t, NULL);
	for (int i = 0; i < 100; i++)
		site_main();
	printf("strictthread: %d signals handled\n", SIGNALS);
	fprintf(stderr, "prog_seccomp: %ld calls in strict mode\n",
		STRICT_CALLS + strict_loops + SIGNALS);
	return 0;
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
	if (!strcmp(mode, "strict") || !strcmp(mode, "strictsys")) {
		if (strict(mode[6] == 's'))
			return 3;
		say(mode[6] == 's' ? "strictsys: done\n" : "strict: done\n");
		syscall(SYS_exit, 0); /* (exit_group, _exit's, is not allowed) */
	}
	if (!strcmp(mode, "strictexit")) {
		printf("strictexit: done\n"); /* (left in stdio's buffer) */
		if (strict(0))
			return 3;
		exit(0);
	}
	if (!strcmp(mode, "strictthread"))
		return strict_in_thread() ? 3 : 0;
	return 2;
}
