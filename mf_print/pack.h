/* Reading a process directory's pack, `ended.pack` (malloc_freq_format.h, version 12): the
 * files of threads that ended, as records. A packed thread is read by a name of its own,
 * <its file's name>@<its record's offset>, which mf_read_profile takes like a file's, so every
 * reader of a directory's threads sees it as it saw its file, in the same order. */
#ifndef MF_PACK_H
#define MF_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "malloc_freq_format.h"
#include "reader.h"

struct mf_pack_entry {
	uint64_t offset;		 /* of its record in the pack */
	uint64_t header_len, nodes_len;	 /* as the record says (checked) */
	uint64_t tid, start_ns;		 /* the thread's, from its header */
	char name[MF_PACK_NAME_LEN + 1]; /* its file's name, NUL-terminated */
	size_t same; /* the index in v of the first record of its thread: its own, or the one a
			repeat of the same thread (name, tid, start) repeats; read once */
};

struct mf_pack {
	const unsigned char *data; /* the pack's bytes (a mapping when read by mf_pack_of) */
	size_t size;
	struct mf_pack_entry *v; /* the whole records, in order */
	size_t n;
	size_t *by_name;  /* v's indexes by name, then offset */
	uint64_t good;	  /* where the records read end */
	char damage[320]; /* what ends them before size ("" if nothing): the caller says it */
	/* The record cut short by the pack's end, if its name could be read (name "": none):
	 * header_len 0 if its thread's tid and start could not be read too. */
	struct mf_pack_entry cut;
	size_t repeats; /* records that repeat an earlier one's thread (v[i].same != i) */
	size_t repeat;	/* the first of them */
};

#define MF_PACK_READ_NAME (MF_PACK_NAME_LEN + 24) /* <name>@<offset>, NUL */

/* The records of a pack's bytes, checked (magic, sizes, check, the header's size and thread),
 * up to the first that is not whole or not right: 0, or -ENOMEM. data must outlive out. */
int mf_pack_parse(const unsigned char *data, size_t size, struct mf_pack *out);
void mf_pack_free(struct mf_pack *pk);
/* dir's pack, read once and kept (a few at a time) until mf_pack_drop: NULL if it has none
 * or it cannot be read (said on stderr, *damaged set). A pack whose records end before its
 * end is said on stderr the first time (`mf_print: warning: DIR/ended.pack: ...`) and sets
 * *damaged each time, unless only its last record is cut short and that record's file is in
 * dir (mf_pack_cut_file). Records that repeat a thread are said the first time too. */
const struct mf_pack *mf_pack_of(const char *dir, int *damaged);
void mf_pack_drop(void);
/* dir's pack as mf_pack_of, when snapshot number of dir holds len bytes of it (its pack_len:
 * the threads packed before it, which it reads there): read again if the one kept ends
 * before len and the file changed since (read before that snapshot was taken). 0 with *out
 * (NULL: none); -1 if its records still end before len (the pack cut short, damaged,
 * replaced or removed: threads are lost), said on stderr the first time, naming the pack. */
int mf_pack_upto(const char *dir, uint64_t len, uint64_t number, const struct mf_pack **out);
/* The name entry e is read by (<name>@<offset>), into buf (MF_PACK_READ_NAME bytes). */
void mf_pack_entry_name(const struct mf_pack_entry *e, char *buf, size_t size);
/* Whether name (no directory) is one: then its offset in *offset. */
int mf_pack_is_name(const char *name, uint64_t *offset);
/* The first record of file name at or after offset from; NULL if none. A repeat is taken as
 * the record it repeats, here and in mf_pack_same. */
const struct mf_pack_entry *mf_pack_after(const struct mf_pack *pk, const char *name,
					  uint64_t from);
/* The record of file name of thread tid that started at start_ns; NULL if none. */
const struct mf_pack_entry *mf_pack_same(const struct mf_pack *pk, const char *name, uint64_t tid,
					 uint64_t start_ns);
/* The record of the thread whose ended file is dir/name, if pk holds one (a process killed
 * between a record's write and its file's removal): NULL if none. */
const struct mf_pack_entry *mf_pack_of_file(const struct mf_pack *pk, const char *dir,
					    const char *name);
/* Whether pk's cut record (pk->cut) is of a thread whose file is still in dir: nothing lost
 * (the process was killed while writing it, before it removed the file). */
int mf_pack_cut_file(const struct mf_pack *pk, const char *dir);
/* Reads the packed thread path names (DIR/<name>@<offset>): as mf_read_profile. */
int mf_pack_read(const char *path, struct mf_profile *out, char *err, size_t errlen);
/* A thread file path that is gone (a process still running packed it since it was listed):
 * read from the newest record of its name in its directory's pack, read again; as
 * mf_read_profile, or 1 if there is none. */
int mf_pack_read_gone(const char *path, struct mf_profile *out, char *err, size_t errlen);
/* The profile of pk's record e as a file's image (its path: path), as mf_parse_profile. */
int mf_pack_profile(const struct mf_pack *pk, const struct mf_pack_entry *e, const char *path,
		    struct mf_profile *out, char *err, size_t errlen);
/* A process directory's thread files as a reader takes them: names (n, malloc'd, each too),
 * dir's .prof files, less those whose thread is packed too (a process killed between the two
 * steps: the same image twice), plus the names of its packed threads; unsorted. 0; 1 when
 * the pack's records end early (said); -ENOMEM. */
int mf_pack_add_names(const char *dir, char ***names, size_t *n);

#endif
