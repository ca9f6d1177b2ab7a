/* malloc_freq --attach and --detach (attach.c). */
#ifndef MF_LAUNCHER_ATTACH_H
#define MF_LAUNCHER_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

/* malloc_freq.c: "malloc_freq: " and the message on stderr, a line of its own. */
void mf_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* malloc_freq.c: NULL where the library records on this kernel (its pages are the size it is
 * laid out for, MF_PAGE_SIZE); else why it does not, for a message. */
const char *mf_pages_unfit(void);
/* Is the ELF file at path statically linked (no program interpreter, so no dynamic loader)? */
int mf_attach_elf_static(const char *path);
/* Whether process pid can be attached to (detach 0) or detached from (detach 1): it exists,
 * it may be traced, it is dynamically linked, it is not profiled yet (or is, for a detach),
 * gdb is there. 0, or -1 after saying why not. *uid: the process's user. */
int mf_attach_check(pid_t pid, int detach, uid_t *uid);
/* The library at lib (an absolute path, no symbolic link) loaded into pid, with the settings
 * env ("NAME=VALUE", NULL-terminated, 32 at most) in its environment while it starts, taken
 * out after; then asked whether it records (it makes its process directory), and undone at
 * once when it does not. 0: it records, its process directory in dir (size bytes; "" if not
 * said); -1 after saying why not; an errno (not said): the library loaded, but the process
 * could not make its directory (ENOSYS: the library could not start, and said why on the
 * process's stderr). */
int mf_attach_inject(pid_t pid, const char *lib, const char *const *env, char *dir, size_t size);
/* Recording in pid stopped, the files final (the library found by the path mapped in pid, and
 * its functions through its handle, not by name); its process directory into dir (size bytes).
 * 0, or -1 after saying why not (also when the attach never recorded). */
int mf_attach_detach(pid_t pid, char *dir, size_t size);

#endif
