/* The seccomp filter's reader: a classic BPF program that a program is about to install,
 * copied from its memory as the kernel copies it and run here on each system call the
 * profiler's slow steps make (confine.c asks, before the install). Reads no argument and no
 * instruction pointer: a filter that does is taken to forbid. Runs inside the program's prctl
 * and syscall: no malloc, no stdio. */
#include "config.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mf_internal.h"

/* The system calls the profiler's slow steps make once the program runs (MF_SYS_NAMED:
 * open, mkdir, stat, ... where the architecture has them, else their *at forms). */
/* clang-format off */
static const int mf_bpf_calls[] = {
    SYS_clone,	       SYS_exit,	   MF_SYS_NAMED(open, openat), SYS_openat,
    SYS_close,	       SYS_read,	   SYS_pread64,	  SYS_write,
    SYS_pwrite64,      SYS_lseek,	   MF_SYS_NAMED(mkdir, mkdirat), SYS_mkdirat,
    SYS_newfstatat,    SYS_fstat,	   MF_SYS_NAMED(lstat, newfstatat), MF_SYS_NAMED(stat, newfstatat),
    SYS_fallocate,     SYS_ftruncate,	   SYS_mmap,	  SYS_mprotect,
    SYS_munmap,	       SYS_mremap,	   SYS_madvise,	  SYS_mincore,
    MF_SYS_NAMED(rename, renameat), SYS_renameat,	   SYS_renameat2, SYS_unlinkat,
    SYS_getdents64,    SYS_fchownat,	   MF_SYS_NAMED(readlink, readlinkat), SYS_readlinkat,
    SYS_prlimit64,     SYS_rt_sigprocmask, SYS_futex,	  SYS_membarrier,
    SYS_sched_yield,   SYS_getpid,	   SYS_gettid,	  SYS_getppid,
    SYS_clock_gettime, SYS_fcntl,	   SYS_dup,	  SYS_process_vm_readv,
    SYS_geteuid,       SYS_getegid,
};
/* clang-format on */

/* Runs the classic BPF seccomp program filter[0..len) on system call nr; its action, or
 * SECCOMP_RET_KILL_PROCESS if it looks at the arguments or the instruction pointer, or is
 * malformed. */
static uint32_t mf_bpf_run(const struct sock_filter *filter, unsigned len, int nr)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &filter[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k == offsetof(struct seccomp_data, nr))
				a = (uint32_t)nr;
			else if (f->k == offsetof(struct seccomp_data, arch))
				a = MF_ARCH_AUDIT;
			else
				return SECCOMP_RET_KILL_PROCESS; /* (arguments: not known) */
			continue;
		case BPF_LD | BPF_W | BPF_LEN:
			a = sizeof(struct seccomp_data);
			continue;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = sizeof(struct seccomp_data);
			continue;
		case BPF_LD | BPF_IMM:
			a = f->k;
			continue;
		case BPF_LDX | BPF_IMM:
			x = f->k;
			continue;
		case BPF_MISC | BPF_TAX:
			x = a;
			continue;
		case BPF_MISC | BPF_TXA:
			a = x;
			continue;
		case BPF_RET | BPF_K:
			return f->k;
		case BPF_RET | BPF_A:
			return a;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			continue;
		}
		if (BPF_CLASS(f->code) == BPF_LD && BPF_MODE(f->code) == BPF_MEM &&
		    f->k < BPF_MEMWORDS)
			a = mem[f->k];
		else if (BPF_CLASS(f->code) == BPF_LDX && BPF_MODE(f->code) == BPF_MEM &&
			 f->k < BPF_MEMWORDS)
			x = mem[f->k];
		else if (BPF_CLASS(f->code) == BPF_ST && f->k < BPF_MEMWORDS)
			mem[f->k] = a;
		else if (BPF_CLASS(f->code) == BPF_STX && f->k < BPF_MEMWORDS)
			mem[f->k] = x;
		else if (BPF_CLASS(f->code) == BPF_ALU) {
			switch (BPF_OP(f->code)) {
			case BPF_ADD:
				a += src;
				break;
			case BPF_SUB:
				a -= src;
				break;
			case BPF_MUL:
				a *= src;
				break;
			case BPF_DIV:
				a = src ? a / src : 0;
				break;
			case BPF_MOD:
				a = src ? a % src : 0;
				break;
			case BPF_AND:
				a &= src;
				break;
			case BPF_OR:
				a |= src;
				break;
			case BPF_XOR:
				a ^= src;
				break;
			case BPF_LSH:
				a = src < 32 ? a << src : 0;
				break;
			case BPF_RSH:
				a = src < 32 ? a >> src : 0;
				break;
			case BPF_NEG:
				a = -a;
				break;
			default:
				return SECCOMP_RET_KILL_PROCESS;
			}
		} else if (BPF_CLASS(f->code) == BPF_JMP) {
			int t;
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:
				t = a == src;
				break;
			case BPF_JGT:
				t = a > src;
				break;
			case BPF_JGE:
				t = a >= src;
				break;
			case BPF_JSET:
				t = (a & src) != 0;
				break;
			default:
				return SECCOMP_RET_KILL_PROCESS;
			}
			pc += t ? f->jt : f->jf;
		} else {
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS; /* (ran off its end: the kernel refuses such a filter) */
}

/* Would the filter let every slow step's system call run or fail with an errno? */
static int mf_bpf_allows_calls(const struct sock_filter *filter, unsigned len)
{
	for (size_t i = 0; i < sizeof(mf_bpf_calls) / sizeof(mf_bpf_calls[0]); i++) {
		uint32_t action =
		    mf_bpf_run(filter, len, mf_bpf_calls[i]) & SECCOMP_RET_ACTION_FULL;
		if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_ERRNO &&
		    action != SECCOMP_RET_LOG)
			return 0;
	}
	return 1;
}

/* n bytes of the program's memory at p into buf, copied by the kernel as it will copy them for
 * the install: 0, or an errno (EFAULT where the kernel's copy would fail too, not a fault
 * here). From this thread by its own id: once the main thread has exited, the process's id
 * names a zombie that has no memory left to read. */
static int mf_bpf_copy(void *buf, const void *p, size_t n)
{
	struct iovec local = {buf, n}, remote = {(void *)p, n};
	ssize_t r = process_vm_readv(gettid(), &local, 1, &remote, 1, 0);
	return r == (ssize_t)n ? 0 : r >= 0 ? EFAULT : errno;
}

int mf_bpf_allows(const void *fprog, int *err)
{
	struct sock_fprog prog;
	if ((*err = mf_bpf_copy(&prog, fprog, sizeof(prog))))
		return 0;
	if (prog.len == 0 || prog.len > BPF_MAXINSNS)
		return 0; /* (the kernel refuses it: EINVAL) */
	size_t size = prog.len * sizeof(struct sock_filter);
	struct sock_filter *f = mmap(NULL, size, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* (up to 32 KiB) */
	if (f == MAP_FAILED) {
		*err = errno;
		return 0;
	}
	int ok = !(*err = mf_bpf_copy(f, prog.filter, size)) && mf_bpf_allows_calls(f, prog.len);
	munmap(f, size);
	return ok;
}
