/* The process's module map: every object ever loaded (path, build-id, load bias, address range),
 * append-only so that frames of unloaded libraries still name their module; kept in anonymous
 * memory and rewritten to `modules` in the process directory after each change. A module
 * takes 64 bytes and its path's length, in memory and in the file. Every namespace's objects
 * are in it (those of dlmopen too). Called from
 * inside malloc on the slow path (new trie node): no malloc, no stdio. Our lock is never held
 * while the loader's is taken (dl_iterate_phdr): objects are collected first, merged after. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"

/* A module: its record as the file has it (but loaded, which holds merge state meanwhile),
 * and where its path lies in a path arena. */
struct mf_mod {
	struct mf_module_record r;
	uint64_t path;	    /* offset of the NUL-terminated path in its arena */
	uintptr_t eh_frame; /* its .eh_frame_hdr (PT_GNU_EH_FRAME), or 0 */
};

/* Paths one after another, in anonymous memory that moves as it grows. */
struct mf_arena {
	char *p;
	size_t used, cap;
};

/* Appends s[0..n) and a NUL; its offset goes to *off. 0, or -1 out of memory. */
static int mf_arena_put(struct mf_arena *a, const char *s, size_t n, uint64_t *off)
{
	if (a->used + n + 1 > a->cap) {
		size_t cap = a->cap ? a->cap : 4096;
		while (cap < a->used + n + 1)
			cap *= 2;
		char *p =
		    mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -1;
		if (a->p) {
			memcpy(p, a->p, a->used);
			munmap(a->p, a->cap);
		}
		a->p = p;
		a->cap = cap;
	}
	memcpy(a->p + a->used, s, n);
	a->p[a->used + n] = 0;
	*off = a->used;
	a->used += n + 1;
	return 0;
}

static void mf_arena_free(struct mf_arena *a)
{
	if (a->p)
		munmap(a->p, a->cap);
}

static pthread_mutex_t mf_modules_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mf_mod *mf_mods;
static struct mf_arena mf_paths;
static uint32_t mf_mods_count, mf_mods_capacity;
static char mf_main_path[MF_PATH_LEN];		      /* the program's, read once at start */
static unsigned long long mf_seen_adds, mf_seen_subs; /* loader counters of the last merge */
static int mf_seen_any;
static uintptr_t mf_self_start, mf_self_end;
volatile unsigned mf_modules_generation;

/* What one pass over the loaded objects found. */
struct mf_scan {
	struct mf_mod *mods;
	struct mf_arena paths;
	uint32_t count, capacity;
	int nth;
	int incomplete; /* out of room or memory: it must not pass for the loaded objects */
};

static int mf_modules_reserve(uint32_t need)
{
	if (need <= mf_mods_capacity)
		return 0;
	uint32_t cap = mf_mods_capacity ? mf_mods_capacity * 2 : 64;
	while (cap < need)
		cap *= 2;
	void *p = mmap(NULL, (size_t)cap * sizeof(*mf_mods), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	if (mf_mods) /* (the old array stays mapped: a reader without the lock may hold it) */
		memcpy(p, mf_mods, (size_t)mf_mods_count * sizeof(*mf_mods));
	__atomic_store_n(&mf_mods, (struct mf_mod *)p, __ATOMIC_RELEASE);
	mf_mods_capacity = cap;
	return 0;
}

static void mf_build_id(const struct dl_phdr_info *info, struct mf_mod *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof(*n);
			const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
			const unsigned char *next = desc + ((n->n_descsz + 3) & ~3u);
			if (next > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4)) {
				m->r.build_id_len =
				    n->n_descsz < MF_BUILD_ID_LEN ? n->n_descsz : MF_BUILD_ID_LEN;
				memcpy(m->r.build_id, desc, m->r.build_id_len);
				return;
			}
			p = next;
		}
	}
}

/* An object the loader knows by a relative name (dlopen("./liba.so"), LD_LIBRARY_PATH=.) is
 * named by the kernel's path of its first mapping, absolute, into buf: mf_print reads the map
 * from another directory. (readlink of /proc/self/map_files takes no descriptor.) The name as
 * the loader gave it if that cannot be read. */
static const char *mf_module_absolute(const struct dl_phdr_info *info, const char *name, char *buf,
				      size_t size)
{
	const ElfW(Phdr) *first = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    (!first || info->dlpi_phdr[i].p_vaddr < first->p_vaddr))
			first = &info->dlpi_phdr[i];
	if (name[0] == '/' || !first)
		return name;
	uintptr_t page = (uintptr_t)getpagesize(), at = info->dlpi_addr + first->p_vaddr;
	uintptr_t lo = at & ~(page - 1), hi = (at + first->p_filesz + page - 1) & ~(page - 1);
	char link[64];
	mf_format(link, sizeof(link), "/proc/self/map_files/%lx-%lx", (unsigned long)lo,
		  (unsigned long)hi);
	ssize_t n = readlink(link, buf, size - 1);
	if (n <= 0 || buf[0] != '/')
		return name;
	buf[n] = 0;
	return buf;
}

/* dl_iterate_phdr reports the main program first, with an empty name; the vdso also has none. */
static int mf_module_path(const struct dl_phdr_info *info, int is_main, struct mf_scan *s,
			  struct mf_mod *m)
{
	char absolute[MF_PATH_LEN];
	const char *name = info->dlpi_name;
	if (!name || !*name)
		name = !is_main ? "[vdso]" : *mf_main_path ? mf_main_path : "[main]";
	else
		name = mf_module_absolute(info, name, absolute, sizeof(absolute));
	size_t n = strnlen(name, MF_PATH_LEN - 1);
	m->r.path_len = (uint32_t)n;
	return mf_arena_put(&s->paths, name, n, &m->path);
}

static int mf_scan_count(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	(*(uint32_t *)arg)++;
	return 0;
}

static int mf_scan_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_scan *s = arg;
	int is_main = s->nth++ == 0;
	if (s->count >= s->capacity)
		return s->incomplete = 1;
	struct mf_mod *m = &s->mods[s->count];
	memset(m, 0, sizeof(*m));
	m->r.bias = info->dlpi_addr;
	m->r.start = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_EH_FRAME)
			m->eh_frame = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (lo < m->r.start)
			m->r.start = lo;
		if (hi > m->r.end)
			m->r.end = hi;
	}
	if (m->r.start >= m->r.end)
		return 0;
	if (mf_module_path(info, is_main, s, m))
		return s->incomplete = 1;
	mf_build_id(info, m);
	s->count++;
	return 0;
}

/* a in the map, b in the scan s. */
static int mf_same_object(const struct mf_mod *a, const struct mf_mod *b, const struct mf_scan *s)
{
	return a->r.bias == b->r.bias && a->r.start == b->r.start && a->r.end == b->r.end &&
	       a->r.build_id_len == b->r.build_id_len &&
	       !memcmp(a->r.build_id, b->r.build_id, a->r.build_id_len) &&
	       a->r.path_len == b->r.path_len &&
	       !memcmp(mf_paths.p + a->path, s->paths.p + b->path, a->r.path_len);
}

/* Under the lock: makes the map say what the scan saw. A reloaded object gets its old record
 * back. Returns 1 if anything changed; *missed is set if an object could not be added (out of
 * memory). */
static int mf_modules_merge(const struct mf_scan *s, int *missed)
{
	int changed = 0, unloaded = 0;
	for (uint32_t i = 0; i < mf_mods_count; i++)
		mf_mods[i].r.loaded &= 1; /* bit 0: loaded before; bit 1: seen now */
	for (uint32_t k = 0; k < s->count; k++) {
		uint32_t i;
		for (i = 0; i < mf_mods_count; i++)
			if (!(mf_mods[i].r.loaded & 2) &&
			    mf_same_object(&mf_mods[i], &s->mods[k], s))
				break;
		if (i == mf_mods_count) {
			uint64_t path;
			if (mf_modules_reserve(mf_mods_count + 1) ||
			    mf_arena_put(&mf_paths, s->paths.p + s->mods[k].path,
					 s->mods[k].r.path_len, &path)) {
				*missed = 1;
				continue;
			}
			mf_mods[mf_mods_count] = s->mods[k];
			mf_mods[mf_mods_count].path = path;
			mf_mods[i].r.loaded = 0;
			__atomic_store_n(&mf_mods_count, mf_mods_count + 1, __ATOMIC_RELEASE);
		}
		mf_mods[i].r.loaded |= 2;
	}
	for (uint32_t i = 0; i < mf_mods_count; i++) {
		int was = mf_mods[i].r.loaded & 1, now = (mf_mods[i].r.loaded & 2) != 0;
		changed |= was != now;
		unloaded |= was && !now;
		mf_mods[i].r.loaded = (uint32_t)now;
	}
	if (unloaded) {
		__atomic_add_fetch(&mf_modules_generation, 1, __ATOMIC_RELEASE);
		mf_unwind_forget(); /* its addresses may hold other code from now on */
	}
	return changed;
}

/* Writes iov[0..n) at offset at, whole; 0 or -errno. Moves iov along. */
static int mf_pwritev_all(int fd, struct iovec *iov, int n, off_t at)
{
	while (n > 0) {
		ssize_t w = pwritev(fd, iov, n, at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		at += w;
		while (n > 0 && (size_t)w >= iov->iov_len)
			w -= (ssize_t)iov->iov_len, iov++, n--;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* The size of the map in the file. */
static size_t mf_modules_size(void)
{
	size_t size = sizeof(struct mf_modules_header);
	for (uint32_t i = 0; i < mf_mods_count; i++)
		size += sizeof(struct mf_module_record) + mf_mods[i].r.path_len +
			MF_MODULE_PATH_PAD(mf_mods[i].r.path_len);
	return size;
}

/* Writes header and records to fd; 0 or -errno. The records go first: a file cut short
 * before its header is whole reads as no map at all, never as a wrong one. */
static int mf_modules_put(int fd)
{
	struct mf_modules_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MF_MODULES_MAGIC, sizeof(h.magic));
	h.version = MF_FORMAT_VERSION;
	h.byte_order = MF_BYTE_ORDER_MARK;
	h.record_size = sizeof(struct mf_module_record);
	h.count = mf_mods_count;
	h.pid = (uint64_t)getpid();
	static const char zeros[8];
	enum { CHUNK = 16 }; /* records per system call */
	struct iovec iov[3 * CHUNK];
	off_t at = sizeof(h);
	for (uint32_t i = 0; i < mf_mods_count; i += CHUNK) {
		int n = 0;
		size_t bytes = 0;
		for (uint32_t k = i; k < mf_mods_count && k < i + CHUNK; k++) {
			const struct mf_module_record *r = &mf_mods[k].r;
			iov[n++] = (struct iovec){(void *)r, sizeof(*r)};
			iov[n++] = (struct iovec){mf_paths.p + mf_mods[k].path, r->path_len};
			iov[n++] = (struct iovec){(void *)zeros, MF_MODULE_PATH_PAD(r->path_len)};
			bytes += sizeof(*r) + r->path_len + MF_MODULE_PATH_PAD(r->path_len);
		}
		int err = mf_pwritev_all(fd, iov, n, at);
		if (err)
			return err;
		at += (off_t)bytes;
	}
	ssize_t w = pwrite(fd, &h, sizeof(h), 0);
	return w == (ssize_t)sizeof(h) ? 0 : w < 0 ? -errno : -EIO;
}

/* The first map of a directory is written in place (creating a file costs more than all the
 * rest of starting); later ones replace it whole, through a rename. */
static long mf_modules_write_apart(void *unused)
{
	(void)unused;
	const char *dir = mf_prof_dir();
	char tmp[64];
	/* (by pid: a child forked by a signal handler may be finishing its parent's map) */
	mf_format(tmp, sizeof(tmp), "modules.%d.tmp", (int)getpid());
	int err = mf_prof_size_allowed((off_t)mf_modules_size());
	if (err) {
		MF_LOG_ONCE("cannot write %s/modules: %s; frames will show as module numbers", dir,
			    strerrordesc_np(-err));
		return 0;
	}
	int dfd = mf_prof_dir_open();
	if (dfd < 0)
		return 0;
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(dfd, "modules", flags, mf_config.file_mode);
	if (fd >= 0) {
		err = mf_modules_put(fd);
		close(fd);
		if (err)
			MF_LOG_ONCE(
			    "cannot write %s/modules: %s; frames will show as module numbers", dir,
			    strerrordesc_np(-err));
		mf_prof_dir_close(dfd);
		return 0;
	}
	/* A child forked by a signal handler in the middle of this goes on here with the
	 * parent's directory: it leaves the file to the parent. */
	if (!mf_prof_dir_mine()) {
		mf_prof_dir_close(dfd);
		return 0;
	}
	unlinkat(dfd, tmp, 0);
	if ((fd = openat(dfd, tmp, flags, mf_config.file_mode)) < 0) {
		MF_LOG_ONCE("cannot create %s/%s: %s; frames will show as module numbers", dir, tmp,
			    strerrordesc_np(errno));
		mf_prof_dir_close(dfd);
		return 0;
	}
	err = mf_modules_put(fd);
	close(fd);
	if (mf_prof_dir_mine() && (err || renameat(dfd, tmp, dfd, "modules") != 0)) {
		MF_LOG_ONCE("cannot write %s/modules: %s; frames will show as module numbers", dir,
			    strerrordesc_np(err ? -err : errno));
		unlinkat(dfd, tmp, 0);
	}
	mf_prof_dir_close(dfd);
	return 0;
}

static void mf_modules_write_locked(void)
{
	if (mf_prof_dir())
		mf_fds_apart(mf_modules_write_apart, NULL);
}

/* Looks at the loaded objects (without our lock) and merges what changed (with it). */
void mf_modules_refresh(void)
{
	if (mf_loader_stuck)
		return;
	unsigned long long c[2];
	mf_objects_counters(c);
	if (__atomic_load_n(&mf_seen_any, __ATOMIC_ACQUIRE) &&
	    c[0] == __atomic_load_n(&mf_seen_adds, __ATOMIC_RELAXED) &&
	    c[1] == __atomic_load_n(&mf_seen_subs, __ATOMIC_RELAXED))
		return;
	uint32_t n = 0;
	mf_objects_each(mf_scan_count, &n);
	n += 16; /* objects loaded between the two passes */
	struct mf_scan s = {.capacity = n};
	s.mods = mmap(NULL, (size_t)n * sizeof(struct mf_mod), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s.mods == MAP_FAILED)
		return;
	mf_objects_each(mf_scan_visit, &s);
	pthread_mutex_lock(&mf_modules_lock);
	/* A scan older than the last merge (counters only grow) would bring back the unloaded;
	 * an incomplete one would unload the objects it missed. */
	if (!s.incomplete && (!mf_seen_any || c[0] + c[1] > mf_seen_adds + mf_seen_subs)) {
		int missed = 0;
		if (mf_modules_merge(&s, &missed) || !mf_seen_any)
			mf_modules_write_locked();
		if (!missed) { /* else the next address not found looks again */
			__atomic_store_n(&mf_seen_adds, c[0], __ATOMIC_RELAXED);
			__atomic_store_n(&mf_seen_subs, c[1], __ATOMIC_RELAXED);
			__atomic_store_n(&mf_seen_any, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&mf_modules_lock);
	munmap(s.mods, (size_t)n * sizeof(struct mf_mod));
	mf_arena_free(&s.paths);
}

/* Does the file at path start as an ELF file does (not a script run through its #! line)? 1
 * or 0; opened apart from the program's descriptors (mf_fds_apart). */
static long mf_is_elf_apart(void *path)
{
	char magic[SELFMAG];
	return mf_read_head(path, magic, sizeof(magic), NULL) == SELFMAG &&
	       memcmp(magic, ELFMAG, SELFMAG) == 0;
}

/* The program's path into buf (size bytes): /proc/self/exe's link, or, without /proc (a
 * chroot or sandbox that has none), the path it was executed by, absolute from the working
 * directory, which a constructor seldom changes before ours; "" if neither is known. Not a
 * script's: the kernel gives its path when the program is its interpreter, and an ELF
 * program is not a script. At start only: the working directory may change later. */
static void mf_main_path_find(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = 0;
	const char *fn = (const char *)getauxval(AT_EXECFN);
	size_t len = fn ? strlen(fn) : 0, at = 0;
	if (n > 0 || !len || mf_fds_apart(mf_is_elf_apart, (void *)fn) != 1)
		return;
	if (fn[0] != '/') {
		if (!getcwd(buf, size)) {
			buf[0] = 0;
			return;
		}
		at = strlen(buf);
		if (at && buf[at - 1] != '/')
			buf[at++] = '/';
		for (; fn[0] == '.' && fn[1] == '/'; fn += 2, len -= 2)
			;
	}
	if (at + len >= size) {
		buf[0] = 0;
		return;
	}
	memcpy(buf + at, fn, len + 1);
}

const char *mf_modules_main_path(void)
{
	return mf_main_path;
}

void mf_modules_init(void)
{
	mf_main_path_find(mf_main_path, sizeof(mf_main_path));
	mf_modules_refresh();
	Dl_info info;
	if (!dladdr((void *)mf_modules_init, &info))
		return;
	pthread_mutex_lock(&mf_modules_lock);
	for (uint32_t i = 0; i < mf_mods_count; i++)
		if (mf_mods[i].r.loaded && (uintptr_t)info.dli_fbase >= mf_mods[i].r.start &&
		    (uintptr_t)info.dli_fbase < mf_mods[i].r.end) {
			mf_self_start = mf_mods[i].r.start;
			mf_self_end = mf_mods[i].r.end;
		}
	pthread_mutex_unlock(&mf_modules_lock);
}

int mf_modules_is_self(uintptr_t pc)
{
	return pc >= mf_self_start && pc < mf_self_end;
}

/* The loaded module that holds pc, or -1. Needs no lock: a record is published (the count)
 * after it is written, the array holding it before that, and an array outgrown stays mapped. */
static int mf_modules_find(uintptr_t pc)
{
	uint32_t n = __atomic_load_n(&mf_mods_count, __ATOMIC_ACQUIRE);
	const struct mf_mod *mods = __atomic_load_n(&mf_mods, __ATOMIC_ACQUIRE);
	for (uint32_t i = n; i-- > 0;)
		if (__atomic_load_n(&mods[i].r.loaded, __ATOMIC_RELAXED) && pc >= mods[i].r.start &&
		    pc < mods[i].r.end)
			return (int)i;
	return -1;
}

/* The module this thread resolved last: most new frames and rules of a thread are in it, and
 * need not take the lock (nor, for the lock, the fork lock). Valid while no object was
 * unloaded since (the generation). */
static MF_TLS struct {
	uintptr_t start, end, bias, eh_frame;
	uint64_t identity;
	uint32_t index;
	unsigned generation; /* + 1: 0 is none */
} mf_modules_last;

static int mf_modules_is_last(uintptr_t pc)
{
	return mf_modules_last.generation == mf_modules_generation + 1 &&
	       pc >= mf_modules_last.start && pc < mf_modules_last.end;
}

int mf_modules_resolve_last(uintptr_t pc, uint32_t *module, uint64_t *rel_pc)
{
	if (!mf_modules_is_last(pc))
		return 0;
	*module = mf_modules_last.index;
	*rel_pc = pc - mf_modules_last.bias;
	return 1;
}

/* A hash of the module's build-id; 0 without one worth the name. Under the lock. */
static uint64_t mf_modules_build_id_hash(const struct mf_module_record *r)
{
	uint64_t h = 0;
	if (r->build_id_len >= 8) { /* shorter ones are not worth the name */
		h = 0xcbf29ce484222325ull;
		for (uint32_t k = 0; k < r->build_id_len; k++)
			h = (h ^ r->build_id[k]) * 0x100000001b3ull;
	}
	return h;
}

/* Makes module i this thread's last. */
static void mf_modules_remember(int i)
{
	const struct mf_mod *m = &__atomic_load_n(&mf_mods, __ATOMIC_ACQUIRE)[i];
	mf_modules_last.start = m->r.start;
	mf_modules_last.end = m->r.end;
	mf_modules_last.bias = m->r.bias;
	mf_modules_last.eh_frame = m->eh_frame;
	mf_modules_last.identity = mf_modules_build_id_hash(&m->r);
	mf_modules_last.index = (uint32_t)i;
	mf_modules_last.generation = mf_modules_generation + 1;
}

uint32_t mf_modules_resolve(uintptr_t pc, uint64_t *rel_pc)
{
	uint32_t module;
	struct mf_object obj;
	if (mf_modules_resolve_last(pc, &module, rel_pc))
		return module;
	int i = mf_modules_find(pc);
	/* Not in the map: an object loaded since the last look (dlopen), unless the loader
	 * knows of none there (JIT code; asking it takes no lock and no system call where glibc
	 * has _dl_find_object). */
	if (i < 0 && mf_objects_find_current(pc, &obj) <= 0) {
		mf_fork_hold();
		mf_modules_refresh();
		i = mf_modules_find(pc);
	}
	if (i < 0) {
		*rel_pc = pc;
		return MF_MODULE_NONE;
	}
	mf_modules_remember(i);
	*rel_pc = pc - mf_modules_last.bias;
	return (uint32_t)i;
}

int mf_modules_range(uintptr_t pc, uintptr_t *start, uintptr_t *end)
{
	uint64_t rel;
	if (mf_modules_resolve(pc, &rel) == MF_MODULE_NONE)
		return -1;
	*start = mf_modules_last.start; /* (it is the last now) */
	*end = mf_modules_last.end;
	return 0;
}

uint64_t mf_modules_identity(uintptr_t pc, uint64_t *rel_pc)
{
	if (mf_modules_resolve(pc, rel_pc) == MF_MODULE_NONE)
		return 0;
	/* The loader unloads some objects by itself (iconv and NSS modules, not through our
	 * dlclose) and may put another at the same address before the map notices: the object
	 * the loader has at pc now (lock-free, no system call where glibc has _dl_find_object)
	 * must be the map's, by where its .eh_frame_hdr lies, or pc would be given the other's
	 * identity (and its rules). */
	struct mf_object obj;
	if (!mf_modules_last.eh_frame || mf_objects_find_current(pc, &obj) != 0 ||
	    obj.eh_frame != mf_modules_last.eh_frame)
		return 0;
	return mf_modules_last.identity;
}

int mf_modules_main_build_id(char *out)
{
	static const char hex[] = "0123456789abcdef";
	pthread_mutex_lock(&mf_modules_lock);
	const struct mf_module_record *r = mf_mods_count ? &mf_mods[0].r : NULL;
	int ok = r && r->build_id_len >= 8;
	for (uint32_t k = 0; ok && k < r->build_id_len; k++) {
		out[2 * k] = hex[r->build_id[k] >> 4];
		out[2 * k + 1] = hex[r->build_id[k] & 15];
	}
	if (ok)
		out[2 * r->build_id_len] = 0;
	pthread_mutex_unlock(&mf_modules_lock);
	return ok ? 0 : -1;
}

void mf_modules_write(void)
{
	pthread_mutex_lock(&mf_modules_lock);
	mf_modules_write_locked();
	pthread_mutex_unlock(&mf_modules_lock);
}

void mf_modules_prefork(void)
{
	pthread_mutex_lock(&mf_modules_lock);
}
void mf_modules_postfork(void)
{
	pthread_mutex_unlock(&mf_modules_lock);
}

void mf_modules_reset(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	memcpy(&mf_modules_lock, &fresh, sizeof(fresh));
}
