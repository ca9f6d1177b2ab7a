/* Stack capture: the only file that includes <libunwind.h> or knows how libunwind behaves.
 * Runs inside malloc: libunwind's local unwinder with per-thread caching, no malloc of ours.
 *
 * libunwind (1.6, as Debian builds it) validates memory by writing it to a pipe it opens in
 * the process, and when that pipe's descriptors look closed it closes them again and reopens:
 * in a program that closed its descriptors and reused the numbers, that closes the program's
 * files. So before libunwind starts, its calls to pipe2, read, write, close and syscall point
 * (in its own GOT, nobody else's) to the functions below: no pipe is made, and the check
 * "is this address readable" is done with process_vm_readv, which needs no descriptor.
 *
 * libunwind blocks every signal around each of its locks (its global cache, which Debian's
 * build keeps whatever the caching policy says; its memory pools; its walk over the loaded
 * objects): eight system calls per step. The blocking is needed, since a program's signal
 * handler may use libunwind too and would wait for ever on a lock its thread holds; but when
 * a capture confirms rules (one libunwind step each, all new: the start of a process is made
 * of them), once per capture is enough. So the first confirmation of a capture blocks every
 * signal in the thread until the capture ends, and meanwhile libunwind's own sigprocmask calls
 * in that thread (through its GOT) do nothing. Everywhere else they are passed on: in
 * unw_backtrace, which once warm takes no lock and makes no system call at all.
 *
 * libunwind is used to confirm the cached walker's rules (one step per new return address)
 * and for the stacks those rules cannot describe. It is loaded (dlopen) at start, unless the
 * rule cache (rules.c) says the program's last run needed nothing from it: then this run does
 * without, nor loads liblzma with it. Should it need libunwind after all, its new rules are
 * used as read, unconfirmed, a stack they cannot describe is counted without its frames, and
 * the next run loads libunwind. */
#include "config.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mf_internal.h"

/* The two ends of libunwind's validation "pipe": numbers no descriptor can have. */
#define MF_FAKE_READ_FD	 (-1000)
#define MF_FAKE_WRITE_FD (-1001)

static int mf_unw_pipe2(int fds[2], int flags)
{
	(void)flags;
	fds[0] = MF_FAKE_READ_FD;
	fds[1] = MF_FAKE_WRITE_FD;
	return 0;
}

static ssize_t mf_unw_read(int fd, void *buf, size_t n)
{
	if (fd == MF_FAKE_READ_FD) {
		errno = EAGAIN; /* "the pipe is empty": it stays open */
		return -1;
	}
	return read(fd, buf, n);
}

static int mf_unw_close(int fd)
{
	if (fd == MF_FAKE_READ_FD || fd == MF_FAKE_WRITE_FD)
		return 0;
	return close(fd);
}

/* Writing one byte of addr to the pipe is libunwind's test that addr is readable: ask the
 * kernel to copy it instead, which fails with EFAULT where the write would have. */
static long mf_unw_readable(const void *addr)
{
	char byte;
	struct iovec local = {&byte, 1}, remote = {(void *)addr, 1};
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1)
		return 1;
	errno = EFAULT;
	return -1;
}

static ssize_t mf_unw_write(int fd, const void *buf, size_t n)
{
	if (fd == MF_FAKE_WRITE_FD)
		return mf_unw_readable(buf);
	return write(fd, buf, n);
}

/* libunwind may write through syscall() to keep sanitizers quiet. */
static long mf_unw_syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_write && (int)a[0] == MF_FAKE_WRITE_FD) /* an int: only its low half is set */
		return mf_unw_readable((const void *)a[1]);
	return syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Set while this thread's signals are blocked for libunwind (mf_unwind_quiet). */
static MF_TLS struct {
	int quiet;
	sigset_t saved;
} mf_unw_signals;

static int mf_unw_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (mf_unw_signals.quiet) { /* every signal is blocked already; libunwind restores
				       what it is given here, which does nothing either */
		if (old)
			sigfillset(old);
		return 0;
	}
	return sigprocmask(how, set, old);
}

static int mf_unw_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return mf_unw_signals.quiet ? mf_unw_sigprocmask(how, set, old)
				    : pthread_sigmask(how, set, old);
}

/* Blocks every signal in this thread until mf_unwind_loud(). */
static void mf_unwind_quiet(void)
{
	if (mf_unw_signals.quiet)
		return;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mf_unw_signals.saved);
	mf_unw_signals.quiet = 1;
}

static void mf_unwind_loud(void)
{
	if (mf_likely(!mf_unw_signals.quiet))
		return;
	mf_unw_signals.quiet = 0;
	pthread_sigmask(SIG_SETMASK, &mf_unw_signals.saved, NULL);
}

/* The pipe's five are needed; the signal mask's are what libunwind happens to call. */
static const struct {
	const char *name;
	void *fn;
	int pipe;
} mf_unw_hooks[] = {
    {"pipe2", (void *)mf_unw_pipe2, 1},
    {"read", (void *)mf_unw_read, 1},
    {"close", (void *)mf_unw_close, 1},
    {"write", (void *)mf_unw_write, 1},
    {"syscall", (void *)mf_unw_syscall, 1},
    {"sigprocmask", (void *)mf_unw_sigprocmask, 0},
    {"pthread_sigmask", (void *)mf_unw_pthread_sigmask, 0},
};

struct mf_patch {
	int found;   /* libunwind's object was seen */
	int patched; /* GOT slots of the pipe's calls rewritten */
	int failed;
};

static uintptr_t mf_dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? info->dlpi_addr + v : v; /* glibc relocates most in place */
}

/* Points one GOT slot at fn, lifting RELRO protection for the write if needed. */
static int mf_patch_slot(void **slot, void *fn)
{
	uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(getpagesize() - 1);
	if (mprotect((void *)page, (size_t)getpagesize(), PROT_READ | PROT_WRITE))
		return -1;
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	return 0; /* left writable: the slot must stay ours, and it is libunwind's page only */
}

static void mf_patch_relocs(const struct dl_phdr_info *info, const ElfW(Rela) * rel, size_t size,
			    const ElfW(Sym) * symtab, const char *strtab, struct mf_patch *p)
{
	for (size_t i = 0; i < size / sizeof(*rel); i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		const char *name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
		for (size_t h = 0; h < sizeof(mf_unw_hooks) / sizeof(mf_unw_hooks[0]); h++) {
			if (strcmp(name, mf_unw_hooks[h].name))
				continue;
			void **slot = (void **)(info->dlpi_addr + rel[i].r_offset);
			if (mf_patch_slot(slot, mf_unw_hooks[h].fn))
				p->failed = 1;
			else
				p->patched += mf_unw_hooks[h].pipe;
		}
	}
}

static int mf_patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_patch *p = arg;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libunwind.so", 12) && strncmp(base, "libunwind-x86_64.so", 19))
		return 0;
	p->found = 1;
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn) {
		p->failed = 1;
		return 0;
	}
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_size = 0, rela_size = 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			symtab = (const void *)mf_dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const void *)mf_dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_JMPREL:
			jmprel = (const void *)mf_dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			jmprel_size = dyn->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const void *)mf_dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			rela_size = dyn->d_un.d_val;
			break;
		}
	}
	if (!symtab || !strtab) {
		p->failed = 1;
		return 0;
	}
	if (jmprel)
		mf_patch_relocs(info, jmprel, jmprel_size, symtab, strtab, p);
	if (rela)
		mf_patch_relocs(info, rela, rela_size, symtab, strtab, p);
	return 0;
}

/* libunwind's functions, set once it is loaded. */
#define MF_UNW_NAME_(f) #f
#define MF_UNW_NAME(f)	MF_UNW_NAME_(f) /* the exported name: unw_step is _ULx86_64_step */
static struct {
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*backtrace)(void **, int);
	int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
	unw_addr_space_t *local_addr_space;
} mf_unw;
static int mf_unw_state; /* 1: loaded; 0: not in this run */

/* dlopen, dlsym, then the GOT patches; 0 or -1 (said on stderr). */
static int mf_unwind_open(void)
{
	void *h = dlopen(MF_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	const char *missing = NULL;
#define MF_UNW_RESOLVE(member, fn)                                                                 \
	if (h && !missing && !(*(void **)&mf_unw.member = dlsym(h, MF_UNW_NAME(fn))))              \
		missing = MF_UNW_NAME(fn);
	MF_UNW_RESOLVE(init_local, unw_init_local)
	MF_UNW_RESOLVE(step, unw_step)
	MF_UNW_RESOLVE(get_reg, unw_get_reg)
	MF_UNW_RESOLVE(backtrace, unw_backtrace)
	MF_UNW_RESOLVE(set_caching_policy, unw_set_caching_policy)
	MF_UNW_RESOLVE(local_addr_space, unw_local_addr_space)
#undef MF_UNW_RESOLVE
	if (!h || missing) {
		const char *why = dlerror(); /* (read, so that the program does not find it) */
		why = h ? missing : why;
		mf_log("cannot load %s (%s%s); frame rules are used without libunwind's "
		       "confirmation, and a stack they cannot describe is counted without its "
		       "frames",
		       MF_LIBUNWIND_SONAME, h ? "no symbol " : "", why ? why : "?");
		return -1;
	}
	struct mf_patch p = {0};
	mf_objects_iterate(mf_patch_object, &p);
	if (!p.found || p.failed || p.patched < 5)
		mf_log("cannot keep libunwind from opening a pipe in this process (%s); a program "
		       "that closes and reuses its descriptors may be disturbed",
		       !p.found	  ? "libunwind not found"
		       : p.failed ? "GOT not writable"
				  : "calls not found");
	/* Starts libunwind (its pipe2 now ours); asks for per-thread caches, which Debian's build
	 * does not have (it keeps one global cache). */
	mf_unw.set_caching_policy(*mf_unw.local_addr_space, UNW_CACHE_PER_THREAD);
	return 0;
}

static MF_TLS int mf_unw_warm; /* libunwind's thread-local block exists in this thread */

/* Loaded with dlopen, libunwind has its thread-local variables in a block that glibc
 * allocates, with malloc, at a thread's first use of them: made to happen here, with every
 * signal blocked, as the profiler's own allocation (mf_real_own). */
static void mf_unwind_warm_thread(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	mf_tls.own++;
	void *pc[1];
	mf_unw.backtrace(pc, 1);
	mf_tls.own--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	mf_unw_warm = 1;
}

/* Can libunwind be called now? (Then this thread's block exists.) If not, the rule cache
 * hears that this run needed it, so that the next one loads it. */
static int mf_unwind_ready(void)
{
	if (mf_likely(mf_unw_warm))
		return 1;
	if (!__atomic_load_n(&mf_unw_state, __ATOMIC_ACQUIRE)) {
		mf_rules_needed();
		return 0;
	}
	mf_unwind_warm_thread();
	return 1;
}

void mf_unwind_init(void)
{
	/* Only now: loading later would be done inside an allocation, perhaps while another
	 * thread's dlopen holds the loader's lock and waits for a lock that this thread holds. */
	if (mf_config.unwind == MF_UNWIND_CACHED && mf_rules_complete())
		return;
	if (__atomic_load_n(&_r_debug.r_state, __ATOMIC_ACQUIRE) != RT_CONSISTENT)
		return; /* the loader is mid-change: a dlopen inside would fail its assertions */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	mf_tls.own++; /* the loader's allocations are the profiler's, not the program's */
	int ok = mf_unwind_open() == 0;
	mf_tls.own--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&mf_unw_state, ok, __ATOMIC_RELEASE);
}

int mf_unwind_agrees(uintptr_t pc, uintptr_t sp, uintptr_t bp, const struct mf_cfi_rule *r)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_word_t nip, nsp, nbp;
	if (mf_unlikely(!mf_unwind_ready()))
		return -1;
	mf_unwind_quiet();
	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)bp;
	if (mf_unw.init_local(&c, &uc) < 0) /* pc is taken as a return address, as here */
		return 0;
	int step = mf_unw.step(&c);
	if (r->kind == MF_CFI_END)
		return step == 0; /* (an error may be passing: such a frame is left to libunwind) */
	if (r->kind != MF_CFI_STEP || step <= 0 || mf_unw.get_reg(&c, UNW_REG_IP, &nip) ||
	    mf_unw.get_reg(&c, UNW_REG_SP, &nsp) || mf_unw.get_reg(&c, UNW_X86_64_RBP, &nbp))
		return 0;
	/* libunwind read the return address below the CFA, and the saved rbp between the two
	 * stack pointers: reading them again here is safe once the CFA is the same. */
	if ((r->cfa_rbp ? bp : sp) + (uintptr_t)r->cfa_off != nsp ||
	    *(const uintptr_t *)(nsp - 8) != nip)
		return 0;
	if (!r->rbp_off)
		return bp == nbp;
	uintptr_t at = nsp + (uintptr_t)(intptr_t)r->rbp_off;
	return at >= sp && *(const uintptr_t *)at == nbp;
}

/* Leaves out libmalloc_freq's own frames (innermost) and ends at the first address that
 * cannot be code; then puts the rest outermost first. Returns the new count. */
static int mf_unwind_trim(void **pcs, int n)
{
	int skip = 0, k = 0;
	while (skip < n && mf_modules_is_self((uintptr_t)pcs[skip]))
		skip++;
	for (int i = skip; i < n && (uintptr_t)pcs[i] >= MF_TRIE_KEY_SPECIAL_MAX; i++)
		pcs[k++] = pcs[i];
	for (int i = 0; i < k / 2; i++) {
		void *x = pcs[i];
		pcs[i] = pcs[k - 1 - i];
		pcs[k - 1 - i] = x;
	}
	return k;
}

static unsigned long mf_checked, mf_checked_walked, mf_checked_differ, mf_checked_recent;

/* MALLOC_FREQ_UNWIND=check: the stack (outermost first) must be unw_backtrace's, as far as
 * it is recorded: its innermost MALLOC_FREQ_DEPTH frames, and whether there are more.
 * (unw_backtrace spends more of max on our own frames, so it may see fewer beyond those.) */
static void mf_unwind_check(void **pcs, int n, void **ref, int max, int walked)
{
	int m = mf_unwind_ready() ? mf_unwind_trim(ref, mf_unw.backtrace(ref, max)) : 0;
	int depth = (int)mf_config.depth, i = 0;
	while (i < n && i < m && i < depth && pcs[n - 1 - i] == ref[m - 1 - i])
		i++;
	int same = i == depth ? (n > depth) == (m > depth) : i == n && i == m;
	__atomic_add_fetch(&mf_checked, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&mf_checked_walked, walked, __ATOMIC_RELAXED);
	if (!same && __atomic_fetch_add(&mf_checked_differ, 1, __ATOMIC_RELAXED) < 20)
		mf_log(
		    "unwind check: frame %d differs: cached walk %lx (of %d frames), libunwind %lx "
		    "(of %d)",
		    i, i < n ? (unsigned long)pcs[n - 1 - i] : 0ul, n,
		    i < m ? (unsigned long)ref[m - 1 - i] : 0ul, m);
}

void mf_unwind_check_recent(uint32_t recent, uint32_t walked)
{
	__atomic_add_fetch(&mf_checked_recent, 1, __ATOMIC_RELAXED);
	if (recent != walked && __atomic_fetch_add(&mf_checked_differ, 1, __ATOMIC_RELAXED) < 20)
		mf_log("unwind check: recent stack at leaf %u, the walk's at leaf %u", recent,
		       walked);
}

int mf_unwind(struct mf_walk_stacks *ws, void **scratch, int max, const struct mf_frame *from,
	      void ***at, uint64_t *hash)
{
	*hash = 0;
	*at = (void **)ws->fresh_pc;
	if (mf_unlikely(mf_loader_stuck))
		return 0; /* libunwind would wait in dl_iterate_phdr for ever */
	int n, walked = 0;
	if (mf_unlikely(mf_config.unwind != MF_UNWIND_CACHED))
		mf_fork_hold(); /* libunwind */
	if (mf_unlikely(mf_config.unwind == MF_UNWIND_LIBUNWIND))
		n = MF_WALK_SLOW;
	else
		walked = (n = mf_walk(ws, max, from->pc, from->sp, from->bp)) >= 0;
	void **pcs = (void **)ws->pc;
	/* The walk starts at the entry point's frame: ours, and the only one. */
	if (mf_likely(n >= 2) && mf_modules_is_self((uintptr_t)pcs[n - 1]) &&
	    mf_likely(!mf_modules_is_self((uintptr_t)pcs[n - 2]))) {
		*at = pcs;
		*hash = ws->f[n - 2].hash;
		n--;
	} else { /* (or a walk that ended oddly: libunwind then says what the stack is) */
		walked = 0;
		mf_fork_hold();
		mf_rules_needed(); /* the next run cannot do without libunwind either */
		/* (without libunwind in this run: counted without a stack) */
		n = mf_unwind_ready() ? mf_unwind_trim(*at, mf_unw.backtrace(*at, max)) : 0;
	}
	if (mf_unlikely(mf_config.unwind == MF_UNWIND_CHECK))
		mf_unwind_check(*at, n, scratch, max, walked);
	mf_unwind_loud();
	return n;
}

void mf_unwind_report(void)
{
	if (mf_config.unwind == MF_UNWIND_CHECK)
		mf_log("unwind check: %lu stacks compared, %lu by the cached walk, %lu differed; "
		       "%lu found among the recent stacks",
		       mf_checked, mf_checked_walked, mf_checked_differ, mf_checked_recent);
}
