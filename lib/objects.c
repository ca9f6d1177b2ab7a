/* The loaded object at an address, without a lock: the loader's _dl_find_object where glibc has
 * it (2.35 and later; looked up at start, not linked, so a library built against an older
 * glibc uses it too), else a table of the loaded objects made from dl_iterate_phdr and made again
 * when the loader's counters of loads and unloads change. Readers of the table take no lock:
 * it is read under a sequence count, and its storage, once published, is never unmapped.
 * Runs inside malloc: no allocation, no stdio, errno preserved. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fork.h"
#include "loaded.h"
#include "mf_internal.h"

/* glibc's struct dl_find_object (2.35), as the loader fills it on x86-64 and AArch64. */
struct mf_dl_find_object {
	unsigned long long flags;
	void *map_start, *map_end;
	struct link_map *link_map;
	void *eh_frame;
	unsigned long long reserved[7];
};
#ifdef HAVE__DL_FIND_OBJECT
_Static_assert(sizeof(struct mf_dl_find_object) == sizeof(struct dl_find_object),
	       "glibc's struct dl_find_object");
#endif
typedef int mf_dl_find_object_fn(void *pc, struct mf_dl_find_object *out);
static mf_dl_find_object_fn *mf_dl_find;

/* The table: entries sorted by start, in a mapping that begins with their count and room. */
struct mf_objects_table {
	uint32_t n, cap;
	struct mf_object e[];
};
static struct mf_objects_table *mf_table;		/* NULL: none made yet */
static unsigned mf_table_seq;				/* odd while the table is being written */
static pid_t mf_table_writer;				/* the process whose thread made it odd */
static unsigned long long mf_table_adds, mf_table_subs; /* the loader's, when it was made */

static int mf_objects_counted(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	unsigned long long *c = arg;
	c[0] = info->dlpi_adds;
	/* (glibc 2.36 counts the objects of other namespaces wrongly there: counted here) */
	c[1] = mf_namespaces_any() ? c[0] - mf_namespaces_loaded() : info->dlpi_subs;
	return 1;
}

void mf_objects_counters(unsigned long long c[2])
{
	c[0] = c[1] = 0;
	mf_objects_iterate(mf_objects_counted, c);
}

static int mf_table_count(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	(*(uint32_t *)arg)++;
	return 0;
}

struct mf_table_scan {
	struct mf_object *e;
	uint32_t n, cap;
	int incomplete;
};

static int mf_table_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mf_table_scan *s = arg;
	struct mf_object o = {UINTPTR_MAX, 0, 0};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_GNU_EH_FRAME)
			o.eh_frame = lo;
		if (p->p_type != PT_LOAD)
			continue;
		if (lo < o.start)
			o.start = lo;
		if (lo + p->p_memsz > o.end)
			o.end = lo + p->p_memsz;
	}
	if (o.start >= o.end)
		return 0;
	if (s->n == s->cap)
		return s->incomplete = 1;
	uint32_t k = s->n++; /* sorted by start as they come */
	for (; k > 0 && s->e[k - 1].start > o.start; k--)
		s->e[k] = s->e[k - 1];
	s->e[k] = o;
	return 0;
}

/* Makes the table anew from the loaded objects. Without a lock: a thread that finds another
 * at it leaves it to that one (a child forked meanwhile takes it over). 0, or -1 if it could
 * not be made now. */
static int mf_table_make(void)
{
	if (mf_loader_stuck)
		return -1; /* dl_iterate_phdr would wait for ever */
	uint32_t count = 0;
	unsigned long long c[2];
	mf_objects_counters(c);
	mf_objects_iterate(mf_table_count, &count);
	struct mf_table_scan s = {NULL, 0, count + 16, 0}; /* (objects loaded meanwhile) */
	s.e = mmap(NULL, (size_t)s.cap * sizeof(*s.e), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s.e == MAP_FAILED)
		return -1;
	mf_objects_iterate(mf_table_visit, &s);
	if (s.incomplete) { /* it must not pass for the loaded objects */
		munmap(s.e, (size_t)s.cap * sizeof(*s.e));
		return -1;
	}
	int ret = -1;
	unsigned seq = __atomic_load_n(&mf_table_seq, __ATOMIC_ACQUIRE);
	pid_t me = getpid();
	if ((seq & 1) && __atomic_load_n(&mf_table_writer, __ATOMIC_RELAXED) == me)
		goto out; /* another thread of ours is at it */
	/* (odd and another process's: a child forked while its parent wrote takes it over) */
	if (!__atomic_compare_exchange_n(&mf_table_seq, &seq, (seq | 1) + (seq & 1 ? 2 : 0), 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		goto out;
	__atomic_store_n(&mf_table_writer, me, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	struct mf_objects_table *t = mf_table;
	if (!t || t->cap < s.n) { /* a new mapping; the old one stays for readers in it */
		uint32_t cap = t ? t->cap : 64;
		while (cap < s.n)
			cap *= 2;
		struct mf_objects_table *fresh =
		    mmap(NULL, sizeof(*t) + (size_t)cap * sizeof(t->e[0]), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fresh != MAP_FAILED) {
			fresh->cap = cap;
			t = fresh;
		}
	}
	if (t && t->cap >= s.n) {
		for (uint32_t i = 0; i < s.n; i++) {
			__atomic_store_n(&t->e[i].start, s.e[i].start, __ATOMIC_RELAXED);
			__atomic_store_n(&t->e[i].end, s.e[i].end, __ATOMIC_RELAXED);
			__atomic_store_n(&t->e[i].eh_frame, s.e[i].eh_frame, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&t->n, s.n, __ATOMIC_RELAXED);
		__atomic_store_n(&mf_table, t, __ATOMIC_RELEASE);
		__atomic_store_n(&mf_table_adds, c[0], __ATOMIC_RELAXED);
		__atomic_store_n(&mf_table_subs, c[1], __ATOMIC_RELAXED);
		ret = 0;
	}
	__atomic_store_n(&mf_table_seq, (seq | 1) + 1 + (seq & 1 ? 2 : 0), __ATOMIC_RELEASE);
out:
	munmap(s.e, (size_t)s.cap * sizeof(*s.e));
	return ret;
}

/* The table's object at pc: 0, 1 if none, -1 if it could not be read now (being written). */
static int mf_table_find(uintptr_t pc, struct mf_object *out)
{
	for (int tries = 0; tries < 64; tries++) {
		unsigned seq = __atomic_load_n(&mf_table_seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			mf_cpu_relax();
			continue;
		}
		const struct mf_objects_table *t = __atomic_load_n(&mf_table, __ATOMIC_ACQUIRE);
		if (!t)
			return -1;
		uint32_t n = __atomic_load_n(&t->n, __ATOMIC_RELAXED), lo = 0, hi;
		hi = n < t->cap ? n : t->cap;
		while (hi - lo > 1) { /* the last entry starting at or before pc */
			uint32_t mid = lo + (hi - lo) / 2;
			if (__atomic_load_n(&t->e[mid].start, __ATOMIC_RELAXED) <= pc)
				lo = mid;
			else
				hi = mid;
		}
		struct mf_object o = {0, 0, 0};
		if (hi > lo) {
			o.start = __atomic_load_n(&t->e[lo].start, __ATOMIC_RELAXED);
			o.end = __atomic_load_n(&t->e[lo].end, __ATOMIC_RELAXED);
			o.eh_frame = __atomic_load_n(&t->e[lo].eh_frame, __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&mf_table_seq, __ATOMIC_RELAXED) != seq)
			continue;
		if (!(pc >= o.start && pc < o.end))
			return 1;
		*out = o;
		return 0;
	}
	return -1;
}

/* Whether the loader loaded or unloaded anything since the table was made (the loader's
 * counters: dl_iterate_phdr, which takes its lock). */
static int mf_table_stale(void)
{
	if (mf_loader_stuck)
		return 0;
	unsigned long long c[2];
	mf_objects_counters(c);
	unsigned seq = __atomic_load_n(&mf_table_seq, __ATOMIC_ACQUIRE);
	int stale = c[0] != __atomic_load_n(&mf_table_adds, __ATOMIC_RELAXED) ||
		    c[1] != __atomic_load_n(&mf_table_subs, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return stale || __atomic_load_n(&mf_table_seq, __ATOMIC_RELAXED) != seq || (seq & 1);
}

int mf_objects_find(uintptr_t pc, struct mf_object *out)
{
	if (mf_likely(mf_dl_find)) {
		struct mf_dl_find_object o;
		if (mf_dl_find((void *)pc, &o) != 0)
			return 1;
		*out = (struct mf_object){(uintptr_t)o.map_start, (uintptr_t)o.map_end,
					  (uintptr_t)o.eh_frame};
		return 0;
	}
	int saved = errno, r = mf_table_find(pc, out);
	errno = saved;
	return r;
}

int mf_objects_loader_knows(void)
{
	return mf_dl_find != NULL;
}

int mf_objects_find_current(uintptr_t pc, struct mf_object *out)
{
	if (mf_likely(mf_dl_find))
		return mf_objects_find(pc, out);
	int saved = errno;
	if (mf_table_stale())
		mf_table_make();
	int r = mf_table_find(pc, out);
	errno = saved;
	return r;
}

/* Whether the running glibc is 2.35 or later: an older one has no _dl_find_object, and its
 * look-up that fails allocates the loader's message, and dlerror's, in the first malloc in the
 * lookup order, the program's own if it has one. */
static int mf_objects_glibc_finds(void)
{
	const char *v = gnu_get_libc_version();
	unsigned part[2] = {0, 0};
	for (int i = 0; i < 2; i++, v += *v == '.') {
		if (*v < '0' || *v > '9')
			return 0;
		for (; *v >= '0' && *v <= '9' && part[i] < 1000; v++)
			part[i] = part[i] * 10 + (unsigned)(*v - '0');
	}
	return part[0] > 2 || (part[0] == 2 && part[1] >= 35);
}

void mf_objects_init(void)
{
	/* (libc's, which asks ld.so; in the global scope whatever loaded the profiler) */
	if (!mf_config.find_object_table && mf_objects_glibc_finds() &&
	    !(*(void **)&mf_dl_find = dlsym(RTLD_DEFAULT, "_dl_find_object")))
		dlerror(); /* (the program's dlerror must not find ours) */
	if (!mf_dl_find)
		mf_table_make();
}
