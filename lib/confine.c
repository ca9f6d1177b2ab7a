/* A program that confines itself: a seccomp filter, installed by prctl(PR_SET_SECCOMP) or by
 * the seccomp system call (through syscall(), glibc having no wrapper). Before it is installed
 * the filter is run here on each system call the profiler's slow steps make: if one would be
 * killed, trapped or traced (or its fate depends on its arguments, which are not known in
 * advance), the profiler stops touching files for good: what it recorded stays in the files
 * already mapped; threads started later and stacks beyond their file's room are counted as not
 * recorded. Calls a filter answers with an errno simply fail, as the profiler expects of them.
 * Both entry points pass every call straight to the kernel (syscall() after unshare's and
 * setns's wait for the descriptor task, fds_apart.c). */
#include "config.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "mf_internal.h"

/* The system call as glibc's syscall() makes it: -1 and errno for an error. */
static long mf_raw_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* The system calls the profiler's slow steps make once the program runs. */
static const int mf_confine_calls[] = {
    SYS_clone,	       SYS_exit,	   SYS_open,	  SYS_openat,
    SYS_close,	       SYS_read,	   SYS_pread64,	  SYS_write,
    SYS_pwrite64,      SYS_lseek,	   SYS_mkdir,	  SYS_mkdirat,
    SYS_newfstatat,    SYS_fstat,	   SYS_lstat,	  SYS_stat,
    SYS_fallocate,     SYS_ftruncate,	   SYS_mmap,	  SYS_mprotect,
    SYS_munmap,	       SYS_mremap,	   SYS_madvise,	  SYS_mincore,
    SYS_rename,	       SYS_renameat,	   SYS_renameat2, SYS_unlinkat,
    SYS_getdents64,    SYS_fchownat,	   SYS_readlink,  SYS_readlinkat,
    SYS_prlimit64,     SYS_rt_sigprocmask, SYS_futex,	  SYS_membarrier,
    SYS_sched_yield,   SYS_getpid,	   SYS_gettid,	  SYS_getppid,
    SYS_clock_gettime, SYS_fcntl,	   SYS_dup,	  SYS_process_vm_readv,
};

/* Runs a classic BPF seccomp program on system call nr; its action, or SECCOMP_RET_KILL_PROCESS
 * if it looks at the arguments or the instruction pointer, or is malformed. */
static uint32_t mf_confine_run(const struct sock_fprog *prog, int nr)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	for (unsigned pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *f = &prog->filter[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k == offsetof(struct seccomp_data, nr))
				a = (uint32_t)nr;
			else if (f->k == offsetof(struct seccomp_data, arch))
				a = AUDIT_ARCH_X86_64;
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
static int mf_confine_allows(const struct sock_fprog *prog)
{
	if (!prog || !prog->filter || prog->len == 0 || prog->len > BPF_MAXINSNS)
		return 0;
	for (size_t i = 0; i < sizeof(mf_confine_calls) / sizeof(mf_confine_calls[0]); i++) {
		uint32_t action =
		    mf_confine_run(prog, mf_confine_calls[i]) & SECCOMP_RET_ACTION_FULL;
		if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_ERRNO &&
		    action != SECCOMP_RET_LOG)
			return 0;
	}
	return 1;
}

static void mf_confine(const char *how, int strict, const struct sock_fprog *prog)
{
	int saved = errno;
	if ((strict || !mf_confine_allows(prog)) && mf_fds_apart_close())
		MF_LOG_ONCE("the program installs a seccomp filter (%s) that could kill the "
			    "profiler's file steps: from now on it makes no file; threads started "
			    "later and new stacks beyond their file's room are counted as not "
			    "recorded",
			    how);
	errno = saved;
}

MF_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
		      a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		mf_confine("prctl", a2 != SECCOMP_MODE_FILTER, (const void *)a3);
	return (int)mf_raw_syscall(SYS_prctl, option, (long)a2, (long)a3, (long)a4, (long)a5, 0);
}

MF_EXPORT long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long),
	     e = va_arg(ap, long), f = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_seccomp && (a == SECCOMP_SET_MODE_FILTER || a == SECCOMP_SET_MODE_STRICT))
		mf_confine("seccomp", a == SECCOMP_SET_MODE_STRICT, (const void *)c);
	if (number == SYS_unshare || number == SYS_setns)
		mf_fds_apart_settle(); /* (they may need the process to be one thread) */
	return mf_raw_syscall(number, a, b, c, d, e, f);
}
