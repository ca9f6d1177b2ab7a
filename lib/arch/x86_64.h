/* What the library needs of the processor, for x86-64: the instructions written by hand, the
 * system call numbers and names it depends on, and libunwind's names for its registers. One
 * file per architecture, chosen by configure (MF_ARCH_HEADER in config.h, through lib/arch.h);
 * the rest of lib/ is the same everywhere. Everything here runs inside malloc: no malloc. */
#ifndef MF_ARCH_X86_64_H
#define MF_ARCH_X86_64_H

#include <cpuid.h>
#include <linux/audit.h>
#include <stdint.h>

/* Stacks are taken by the cached walk (lib/unwind/cfi.c, walk.c) unless told otherwise. */
#define MF_ARCH_UNWIND_DEFAULT MF_UNWIND_CACHED
/* seccomp_data.arch of this architecture's system calls */
#define MF_ARCH_AUDIT AUDIT_ARCH_X86_64
/* A system call on files by name that this architecture has beside its *at form (glibc may
 * make either), for the slow steps' list (lib/confine.c); elsewhere the *at form. */
#define MF_SYS_NAMED(name, at) SYS_##name
/* libunwind's own library for this architecture, by the start of its name */
#define MF_ARCH_LIBUNWIND_SO "libunwind-x86_64.so"
/* The relocations that fill a GOT slot with a function's address */
#define MF_ARCH_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define MF_ARCH_R_GLOB_DAT  R_X86_64_GLOB_DAT
/* ... and an absolute address in data (addend 0: the symbol's own) */
#define MF_ARCH_R_ABS64 R_X86_64_64
/* A ucontext_t uc's registers set to a frame's pc, sp and frame pointer (for unw_init_local),
 * and libunwind's name of the frame pointer. */
#define MF_ARCH_UC_FRAME(uc, pc, sp, bp)                                                           \
	((uc).uc_mcontext.gregs[REG_RIP] = (greg_t)(pc),                                           \
	 (uc).uc_mcontext.gregs[REG_RSP] = (greg_t)(sp),                                           \
	 (uc).uc_mcontext.gregs[REG_RBP] = (greg_t)(bp))
#define MF_ARCH_UNW_BP UNW_X86_64_RBP
/* unw_getcontext is a function of libunwind's, found with dlsym (not code of its header) */
#define MF_ARCH_UNW_GETCONTEXT_DLSYM 1

/* The 32-bit word w != 0, compared where it lies (the compiler loads it and tests the
 * register). */
#define mf_nonzero(w)                                                                              \
	__extension__({                                                                            \
		int ne_;                                                                           \
		_Static_assert(sizeof(w) == 4, "a 32-bit word");                                   \
		__asm__("cmpl $0, %1" : "=@ccne"(ne_) : "m"(w));                                   \
		ne_;                                                                               \
	})

/* --*n <= 0, as one instruction whose flags the branch uses (written in C, the compiler loads,
 * subtracts, stores and tests). */
static inline __attribute__((always_inline)) int mf_count_down(long *n)
{
	int le;
	__asm__("subq $1, %0" : "+m"(*n), "=@ccle"(le));
	return le;
}

/* Sets the pc, sp and bp of struct mf_frame f to the frame of the function this expands in,
 * as it is here: pc an address here (one byte after an instruction of the same frame, as a
 * return address is: the rule for pc is looked up at pc - 1), the stack pointer and rbp as
 * they are at pc. (bp goes straight to f in memory: only the slow path and the hot stacks'
 * checks read it, there.) */
#define MF_FRAME_HERE(f)                                                                           \
	__asm__ volatile("leaq 1f(%%rip), %0\n"                                                    \
			 "1:\tmovq %%rsp, %1\n\t"                                                  \
			 "movq %%rbp, %2"                                                          \
			 : "=r"((f).pc), "=r"((f).sp), "=m"((f).bp))

/* mf_on_stack(top, fn, arg) (lib/thread.c): calls fn(arg) on the stack whose top is top
 * (16-aligned) and returns what it returns. Its frame's CFA is rbp + 16: an unwinder
 * (libunwind, gdb) goes from the frames on that stack back to the caller's. */
#define MF_ARCH_ON_STACK                                                                           \
	".text\n.p2align 4\n.hidden mf_on_stack\n.type mf_on_stack, @function\n"                   \
	"mf_on_stack:\n"                                                                           \
	".cfi_startproc\n"                                                                         \
	"pushq %rbp\n"                                                                             \
	".cfi_def_cfa_offset 16\n"                                                                 \
	".cfi_offset %rbp, -16\n"                                                                  \
	"movq %rsp, %rbp\n"                                                                        \
	".cfi_def_cfa_register %rbp\n"                                                             \
	"movq %rdi, %rsp\n"                                                                        \
	"movq %rdx, %rdi\n"                                                                        \
	"call *%rsi\n"                                                                             \
	"movq %rbp, %rsp\n"                                                                        \
	"popq %rbp\n"                                                                              \
	".cfi_def_cfa %rsp, 8\n"                                                                   \
	"ret\n"                                                                                    \
	".cfi_endproc\n"                                                                           \
	".size mf_on_stack, .-mf_on_stack\n"

/* A spinning thread's pause between two looks at a lock. */
static inline void mf_cpu_relax(void)
{
	__builtin_ia32_pause();
}

/* A fast clock that only goes up: the time-stamp counter (invariant on every x86-64 that Linux
 * keeps it as its clock source), a few nanoseconds a read. mf_ticks_fence: the counter read
 * after what came before, before what comes after. */
static inline uint64_t mf_ticks(void)
{
	return __builtin_ia32_rdtsc();
}
static inline void mf_ticks_fence(void)
{
	__builtin_ia32_lfence();
}
/* Whether mf_ticks runs at one rate whatever the CPU's state (the clock of MALLOC_FREQ_WEIGHT=
 * time, cpu_clock.c): the invariant TSC bit, CPUID 0x80000007 EDX bit 8. */
static inline int mf_ticks_constant(void)
{
	unsigned a, b, c, d;
	return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
}

/* rebind.c's stubs: MF_REBIND_STUB k, fn, reg, 16 bytes, puts the address of mf_rebind_next[k]
 * into reg and jumps to fn (endbr64 first: the stubs are reached by indirect calls). reg is the
 * register of the call's second, third or fourth argument (MF_ARCH_ARG1, 2, 3). */
#define MF_ARCH_REBIND_STUB                                                                        \
	".macro MF_REBIND_STUB k, fn, reg\n"                                                       \
	".p2align 4\n"                                                                             \
	"endbr64\n"                                                                                \
	"leaq mf_rebind_next+\\k*72(%rip), %\\reg\n"                                               \
	"jmp \\fn\n"                                                                               \
	".endm\n"
#define MF_ARCH_ARG1 "rsi"
#define MF_ARCH_ARG2 "rdx"
#define MF_ARCH_ARG3 "rcx"

/* The system call n, made here (not through glibc's syscall(), which the library interposes):
 * its raw result, -errno for an error. */
static inline long mf_arch_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return r;
}

#endif
