/* malloc_freq --attach and --detach (attach.c). */
#ifndef MF_LAUNCHER_ATTACH_H
#define MF_LAUNCHER_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

/* malloc_freq.c: "malloc_freq: " and the message on stderr, a line of its own. */
void mf_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Is the ELF file at path statically linked (no program interpreter, so no dynamic loader)? */
int mf_attach_elf_static(const char *path);
/* Whether process pid can be attached to (detach 0) or detached from (detach 1): it exists,
 * it may be traced, it is dynamically linked, it is not profiled yet (or is, for a detach),
 * gdb is there. 0, or -1 after saying why not. *uid: the process's user. */
int mf_attach_check(pid_t pid, int detach, uid_t *uid);
/* The library at lib (an absolute path) loaded into pid, with the settings env ("NAME=VALUE",
 * NULL-terminated) in its environment while it starts, taken out after. 0, or -1 after saying
 * why not. */
int mf_attach_inject(pid_t pid, const char *lib, const char *const *env);
/* Recording in pid stopped, the files final; its process directory into dir (size bytes).
 * 0, or -1 after saying why not. */
int mf_attach_detach(pid_t pid, char *dir, size_t size);

#endif
