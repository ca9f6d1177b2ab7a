/* What the library needs of the processor, for AArch64 (arm64): as lib/arch/x86_64.h, whose
 * comments say what each piece is for. Everything here runs inside malloc: no malloc. */
#ifndef MF_ARCH_AARCH64_H
#define MF_ARCH_AARCH64_H

#include <linux/audit.h>
#include <stdint.h>

/* Stacks are taken by the cached walk (lib/unwind/cfi.c, walk.c: frame records of x29 and x30
 * by the .eh_frame rules, return addresses stripped of their pointer authentication code). */
#define MF_ARCH_UNWIND_DEFAULT MF_UNWIND_CACHED
#define MF_ARCH_AUDIT	       AUDIT_ARCH_AARCH64
/* (only the *at forms: AArch64 has no open, mkdir, stat, lstat, rename, readlink) */
#define MF_SYS_NAMED(name, at) SYS_##at
#define MF_ARCH_LIBUNWIND_SO   "libunwind-aarch64.so"
#define MF_ARCH_R_JUMP_SLOT    R_AARCH64_JUMP_SLOT
#define MF_ARCH_R_GLOB_DAT     R_AARCH64_GLOB_DAT
#define MF_ARCH_R_ABS64	       R_AARCH64_ABS64
#define MF_ARCH_UC_FRAME(uc, pc_, sp_, bp_)                                                        \
	((uc).uc_mcontext.pc = (uint64_t)(pc_), (uc).uc_mcontext.sp = (uint64_t)(sp_),             \
	 (uc).uc_mcontext.regs[29] = (uint64_t)(bp_))
#define MF_ARCH_UNW_BP		     UNW_AARCH64_X29
#define MF_ARCH_UNW_GETCONTEXT_DLSYM 0 /* (inline code of libunwind.h) */

/* (a load and a compare with a branch on it: what the compiler makes of it anyway) */
#define mf_nonzero(w)                                                                              \
	__extension__({                                                                            \
		_Static_assert(sizeof(w) == 4, "a 32-bit word");                                   \
		(w) != 0;                                                                          \
	})

static inline __attribute__((always_inline)) int mf_count_down(long *n)
{
	return --*n <= 0;
}

/* pc an address here, sp, and the frame pointer x29 (bp) as they are at pc. */
#define MF_FRAME_HERE(f)                                                                           \
	__asm__ volatile("adr %0, 1f\n"                                                            \
			 "1:\tmov %1, sp\n\t"                                                      \
			 "str x29, %2"                                                             \
			 : "=&r"((f).pc), "=&r"((f).sp), "=m"((f).bp))

/* Its frame record (x29, x30) at the CFA - 16, x29 pointing at it: an unwinder goes from the
 * frames on the new stack back to the caller's. */
#define MF_ARCH_ON_STACK                                                                           \
	".text\n.p2align 4\n.hidden mf_on_stack\n.type mf_on_stack, %function\n"                   \
	"mf_on_stack:\n"                                                                           \
	".cfi_startproc\n"                                                                         \
	"stp x29, x30, [sp, -16]!\n"                                                               \
	".cfi_def_cfa_offset 16\n"                                                                 \
	".cfi_offset 29, -16\n"                                                                    \
	".cfi_offset 30, -8\n"                                                                     \
	"mov x29, sp\n"                                                                            \
	".cfi_def_cfa_register 29\n"                                                               \
	"mov sp, x0\n"                                                                             \
	"mov x0, x2\n"                                                                             \
	"blr x1\n"                                                                                 \
	"mov sp, x29\n"                                                                            \
	".cfi_def_cfa sp, 16\n"                                                                    \
	"ldp x29, x30, [sp], 16\n"                                                                 \
	".cfi_def_cfa_offset 0\n"                                                                  \
	".cfi_restore 29\n"                                                                        \
	".cfi_restore 30\n"                                                                        \
	"ret\n"                                                                                    \
	".cfi_endproc\n"                                                                           \
	".size mf_on_stack, .-mf_on_stack\n"

static inline void mf_cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

/* The virtual counter (CNTVCT_EL0), which Linux lets every process read: constant rate. */
static inline uint64_t mf_ticks(void)
{
	uint64_t t;
	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(t));
	return t;
}
static inline void mf_ticks_fence(void)
{
	__asm__ volatile("isb" ::: "memory");
}
/* (the architecture makes the virtual counter's rate constant) */
static inline int mf_ticks_constant(void)
{
	return 1;
}

/* (bti c as a hint, a no-op where there is no BTI; adrp and add: mf_rebind_next[k]'s address;
 * 16 bytes) */
#define MF_ARCH_REBIND_STUB                                                                        \
	".macro MF_REBIND_STUB k, fn, reg\n"                                                       \
	".p2align 4\n"                                                                             \
	"hint 34\n"                                                                                \
	"adrp \\reg, mf_rebind_next+\\k*72\n"                                                      \
	"add \\reg, \\reg, :lo12:mf_rebind_next+\\k*72\n"                                          \
	"b \\fn\n"                                                                                 \
	".endm\n"
#define MF_ARCH_ARG1 "x1"
#define MF_ARCH_ARG2 "x2"
#define MF_ARCH_ARG3 "x3"

static inline long mf_arch_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

#endif
