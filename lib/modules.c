/* The process's module map: every object ever loaded (path, build-id, load bias, address range),
 * append-only so that frames of unloaded libraries still name their module; kept in anonymous
 * memory and rewritten to `modules` in the process directory after each change. Called from
 * inside malloc on the slow path (new trie node): no malloc, a mutex, no stdio. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mf_internal.h"

static pthread_mutex_t mf_modules_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mf_module *mf_mods;
static uint32_t mf_mods_count, mf_mods_capacity;
static unsigned long long mf_seen_adds = ~0ull, mf_seen_subs = ~0ull;
static uintptr_t mf_self_start, mf_self_end;
volatile unsigned mf_modules_generation;

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
	if (mf_mods) {
		memcpy(p, mf_mods, (size_t)mf_mods_count * sizeof(*mf_mods));
		munmap(mf_mods, (size_t)mf_mods_capacity * sizeof(*mf_mods));
	}
	mf_mods = p;
	mf_mods_capacity = cap;
	return 0;
}

static void mf_build_id(const struct dl_phdr_info *info, struct mf_module *m)
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
				m->build_id_len = n->n_descsz < MF_BUILD_ID_LEN ? n->n_descsz
										: MF_BUILD_ID_LEN;
				memcpy(m->build_id, desc, m->build_id_len);
				return;
			}
			p = next;
		}
	}
}

/* dl_iterate_phdr reports the main program first, with an empty name; the vdso also has none. */
static void mf_module_path(const struct dl_phdr_info *info, int is_main, struct mf_module *m)
{
	const char *name = info->dlpi_name;
	if (name && *name) {
		size_t n = strnlen(name, MF_PATH_LEN - 1);
		memcpy(m->path, name, n);
		m->path[n] = 0;
		return;
	}
	ssize_t n = is_main ? readlink("/proc/self/exe", m->path, MF_PATH_LEN - 1) : -1;
	if (n > 0)
		m->path[n] = 0;
	else
		strcpy(m->path, is_main ? "[main]" : "[vdso]");
}

static int mf_modules_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	int *nth = arg;
	struct mf_module m;
	memset(&m, 0, sizeof(m));
	m.bias = info->dlpi_addr;
	m.start = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (lo < m.start)
			m.start = lo;
		if (hi > m.end)
			m.end = hi;
	}
	if (m.start >= m.end)
		return 0;
	mf_module_path(info, (*nth)++ == 0, &m);
	for (uint32_t i = 0; i < mf_mods_count; i++) {
		struct mf_module *o = &mf_mods[i];
		if (o->bias == m.bias && o->start == m.start && o->end == m.end &&
		    o->loaded == 1 && !strcmp(o->path, m.path)) {
			o->loaded |= 2; /* still here */
			return 0;
		}
	}
	mf_build_id(info, &m);
	m.loaded = 2;
	if (mf_modules_reserve(mf_mods_count + 1) == 0)
		mf_mods[mf_mods_count++] = m;
	return 0;
}

static int mf_modules_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	unsigned long long *c = arg;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;
}

/* Under the lock. Returns 1 if anything changed. */
static int mf_modules_scan(void)
{
	unsigned long long c[2] = { 0, 0 };
	dl_iterate_phdr(mf_modules_counters, c);
	if (c[0] == mf_seen_adds && c[1] == mf_seen_subs)
		return 0;
	int unloaded = c[1] != mf_seen_subs && mf_seen_subs != ~0ull;
	mf_seen_adds = c[0];
	mf_seen_subs = c[1];
	int nth = 0;
	dl_iterate_phdr(mf_modules_visit, &nth);
	for (uint32_t i = 0; i < mf_mods_count; i++)
		mf_mods[i].loaded = (mf_mods[i].loaded & 2) ? 1 : 0;
	if (unloaded)
		__atomic_add_fetch(&mf_modules_generation, 1, __ATOMIC_RELEASE);
	return 1;
}

static void mf_modules_write_locked(void)
{
	const char *dir = mf_prof_dir();
	if (!dir)
		return;
	char tmp[MF_PATH_LEN], path[MF_PATH_LEN];
	mf_format(tmp, sizeof(tmp), "%s/modules.tmp", dir);
	mf_format(path, sizeof(path), "%s/modules", dir);
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		MF_LOG_ONCE("cannot create %s: %s; frames will show as module numbers", tmp,
			    strerrordesc_np(errno));
		return;
	}
	struct mf_modules_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MF_MODULES_MAGIC, sizeof(h.magic));
	h.version = MF_FORMAT_VERSION;
	h.byte_order = MF_BYTE_ORDER_MARK;
	h.record_size = sizeof(struct mf_module);
	h.count = mf_mods_count;
	h.pid = (uint64_t)getpid();
	int ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h);
	const char *p = (const char *)mf_mods;
	size_t left = (size_t)mf_mods_count * sizeof(*mf_mods);
	while (ok && left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		ok = w > 0;
		if (ok) {
			p += w;
			left -= (size_t)w;
		}
	}
	close(fd);
	if (!ok || rename(tmp, path) != 0) {
		MF_LOG_ONCE("cannot write %s: %s; frames will show as module numbers", path,
			    strerrordesc_np(errno));
		unlink(tmp);
	}
}

void mf_modules_init(void)
{
	Dl_info info;
	if (dladdr((void *)mf_modules_init, &info)) {
		pthread_mutex_lock(&mf_modules_lock);
		mf_modules_scan();
		for (uint32_t i = 0; i < mf_mods_count; i++)
			if (mf_mods[i].bias == (uintptr_t)info.dli_fbase ||
			    mf_mods[i].start == (uintptr_t)info.dli_fbase) {
				mf_self_start = mf_mods[i].start;
				mf_self_end = mf_mods[i].end;
			}
		pthread_mutex_unlock(&mf_modules_lock);
	}
}

int mf_modules_is_self(uintptr_t pc)
{
	return pc >= mf_self_start && pc < mf_self_end;
}

static int mf_modules_find(uintptr_t pc)
{
	for (uint32_t i = mf_mods_count; i-- > 0;)
		if (mf_mods[i].loaded && pc >= mf_mods[i].start && pc < mf_mods[i].end)
			return (int)i;
	return -1;
}

uint32_t mf_modules_resolve(uintptr_t pc, uint64_t *rel_pc)
{
	pthread_mutex_lock(&mf_modules_lock);
	int i = mf_modules_find(pc);
	if (i < 0 && mf_modules_scan()) {
		mf_modules_write_locked();
		i = mf_modules_find(pc);
	}
	*rel_pc = i < 0 ? pc : pc - mf_mods[i].bias;
	pthread_mutex_unlock(&mf_modules_lock);
	return i < 0 ? MF_MODULE_NONE : (uint32_t)i;
}

void mf_modules_refresh(void)
{
	pthread_mutex_lock(&mf_modules_lock);
	if (mf_modules_scan())
		mf_modules_write_locked();
	pthread_mutex_unlock(&mf_modules_lock);
}

void mf_modules_write(void)
{
	pthread_mutex_lock(&mf_modules_lock);
	mf_modules_write_locked();
	pthread_mutex_unlock(&mf_modules_lock);
}

void mf_modules_prefork(void) { pthread_mutex_lock(&mf_modules_lock); }
void mf_modules_postfork(void) { pthread_mutex_unlock(&mf_modules_lock); }
