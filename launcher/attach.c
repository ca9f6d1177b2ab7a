/* malloc_freq --attach PID and --detach PID: the library loaded into a running process, and
 * its recording stopped there, each by gdb's calls into the process (dlopen; the library's
 * malloc_freq_detach), with the process stopped for their time only. The strings the calls
 * need are written into a page mapped for them and unmapped after, so the program's heap sees
 * none of gdb's work, and the thread's errno is put back. Refuses, saying why, a process that
 * does not exist, may not be traced, is statically linked, or is profiled already, and any
 * on a kernel whose pages the library does not record with. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"

int mf_attach_elf_static(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	int is = 0;
	if (fd >= 0 && pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) && eh.e_phentsize == sizeof(Elf64_Phdr)) {
		is = 1;
		for (unsigned i = 0; i < eh.e_phnum && is; i++) {
			Elf64_Phdr ph;
			off_t at = (off_t)(eh.e_phoff + i * sizeof(ph));
			if (pread(fd, &ph, sizeof(ph), at) != sizeof(ph) || ph.p_type == PT_INTERP)
				is = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	return is;
}

/* The value of the line of /proc/PID/status that starts with key, or NULL. */
static char *mf_attach_status(pid_t pid, const char *key, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	char *found = NULL;
	while (f && !found && fgets(buf, (int)size, f))
		if (!strncmp(buf, key, strlen(key)))
			found = buf + strlen(key);
	if (f)
		fclose(f);
	return found;
}

/* What Yama's ptrace_scope allows, for a message: "" when it is 0 or absent. */
static const char *mf_attach_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;
	if (f && fscanf(f, "%d", &scope) != 1)
		scope = 0;
	if (f)
		fclose(f);
	switch (scope) {
	case 0:
		return "";
	case 1:
		return "; /proc/sys/kernel/yama/ptrace_scope is 1: only a process's ancestors may "
		       "trace it, so attaching takes CAP_SYS_PTRACE (root), or ptrace_scope 0";
	case 2:
		return "; /proc/sys/kernel/yama/ptrace_scope is 2: only CAP_SYS_PTRACE (root) may "
		       "trace a process";
	default:
		return "; /proc/sys/kernel/yama/ptrace_scope is 3: no process may be traced until "
		       "the next boot";
	}
}

/* Does this process have CAP_SYS_PTRACE (bit 19 of CapEff)? */
static int mf_attach_may_trace_all(void)
{
	char buf[256];
	const char *v = mf_attach_status(getpid(), "CapEff:", buf, sizeof(buf));
	return v && (strtoull(v, NULL, 16) >> 19 & 1);
}

/* A library of the profiler mapped in pid (not the API's stub library)? 1 (its path into lib,
 * size bytes, when lib is not NULL), 0; -1: unreadable. */
static int mf_attach_loaded(pid_t pid, char *lib, size_t size)
{
	char path[64], line[4096 + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *slash = strrchr(line, '/'), *start = strchr(line, '/');
		found = slash && !strncmp(slash + 1, "libmalloc_freq", 14) &&
			strncmp(slash + 1, "libmalloc_freq_api", 18);
		if (found && lib) {
			/* (the name it was opened by, also once the file was replaced) */
			size_t len = strcspn(start, "\n");
			if (len > 10 && !strncmp(start + len - 10, " (deleted)", 10))
				len -= 10;
			snprintf(lib, size, "%.*s", (int)len, start);
		}
	}
	fclose(f);
	return found;
}

/* gdb in PATH? */
static int mf_attach_have_gdb(void)
{
	const char *dirs = getenv("PATH");
	char path[4096];
	for (dirs = dirs ? dirs : "/bin:/usr/bin"; *dirs;) {
		size_t len = strcspn(dirs, ":");
		snprintf(path, sizeof(path), "%.*s/gdb", (int)len, dirs);
		if (len && !access(path, X_OK))
			return 1;
		dirs += len + (dirs[len] == ':');
	}
	return 0;
}

int mf_attach_check(pid_t pid, int detach, uid_t *uid)
{
	char buf[256], exe[64], real[4096];
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		mf_say("no process %d", (int)pid);
		return -1;
	}
	if (!detach && mf_pages_unfit()) { /* (the library would record nothing) */
		mf_say("cannot attach to process %d: %s", (int)pid, mf_pages_unfit());
		return -1;
	}
	const char *ids = mf_attach_status(pid, "Uid:", buf, sizeof(buf));
	unsigned long r = 0, e = 0, s = 0;
	if (!ids || sscanf(ids, "%lu %lu %lu", &r, &e, &s) != 3) {
		mf_say("no process %d (its /proc/%d/status cannot be read)", (int)pid, (int)pid);
		return -1;
	}
	*uid = (uid_t)r;
	uid_t me = getuid();
	if ((r != me || e != me || s != me) && !mf_attach_may_trace_all()) {
		mf_say("process %d is user %lu's: tracing it takes that user, or "
		       "CAP_SYS_PTRACE (root)%s",
		       (int)pid, r, mf_attach_scope());
		return -1;
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(exe, real, sizeof(real) - 1);
	real[n > 0 ? n : 0] = 0;
	if (mf_attach_elf_static(exe)) {
		mf_say("process %d (%s) is statically linked: it has no dynamic loader to "
		       "load the profiler into",
		       (int)pid, real);
		return -1;
	}
	int loaded = mf_attach_loaded(pid, NULL, 0);
	if (loaded < 0) {
		mf_say("cannot read /proc/%d/maps: %s%s", (int)pid, strerror(errno),
		       mf_attach_scope());
		return -1;
	}
	if (!detach && loaded) {
		mf_say("process %d (%s) is profiled already: it was started under the "
		       "profiler, or attached to (malloc_freq --detach %d stops an attached "
		       "one)",
		       (int)pid, real, (int)pid);
		return -1;
	}
	if (detach && !loaded) {
		mf_say("process %d (%s) is not profiled", (int)pid, real);
		return -1;
	}
	if (!mf_attach_have_gdb()) {
		mf_say("%s needs gdb, which is not in PATH: install gdb (Debian: apt-get "
		       "install gdb)",
		       detach ? "--detach" : "--attach");
		return -1;
	}
	return 0;
}

/* Runs gdb on pid with the script text (a file of commands); its output (stdout and stderr,
 * the end of it) into out. 0, or -1 when gdb cannot be run. */
static int mf_attach_gdb(pid_t pid, const char *text, char *out, size_t size)
{
	char spid[16];
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/malloc_freq.gdb.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path), fds[2] = {-1, -1};
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    pipe2(fds, O_CLOEXEC)) {
		mf_say("cannot write gdb's commands in %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd), unlink(path);
		return -1;
	}
	close(fd);
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		unsetenv("DEBUGINFOD_URLS");
		/* (a session of its own: the terminal's ^C must not reach gdb while the process
		 * runs a call of its; the process's signals, ignored or not, pass to it without
		 * stopping gdb's call half way) */
		setsid();
		execlp("gdb", "gdb", "-nx", "-q", "-batch", "-iex", "set auto-load off", "-iex",
		       "set unwindonsignal on", "-iex", "handle all nostop noprint pass", "-iex",
		       "handle SIGINT nostop noprint pass", "-p", spid, "-x", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	size_t have = 0;
	ssize_t got;
	/* (gdb's call waits for ever if the thread it stopped holds the allocator's or the
	 * loader's lock: said once after 30 s; ending gdb then could leave the thread in a call
	 * that returns nowhere, so the launcher keeps waiting) */
	struct pollfd wait = {.fd = fds[0], .events = POLLIN};
	if (poll(&wait, 1, 30000) == 0)
		mf_say("gdb's call into process %d has not returned for 30 s: its main thread "
		       "may have been stopped holding the allocator's or the loader's lock "
		       "(docs/internals.md: Attach and detach); still waiting",
		       (int)pid);
	while ((got = read(fds[0], out + have, size - 1 - have)) > 0 || (got < 0 && errno == EINTR))
		if (got > 0 && (have += (size_t)got) == size - 1)
			have = 0; /* (only the end is kept: it says what went wrong) */
	out[have] = 0;
	close(fds[0]);
	int st = 0;
	while (child > 0 && waitpid(child, &st, 0) < 0 && errno == EINTR) {
	}
	unlink(path);
	if (child < 0 || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
		mf_say("cannot run gdb");
		return -1;
	}
	return 0;
}

/* gdb's output: the rest of its line that starts with key, into value; else NULL. */
static const char *mf_attach_line(const char *out, const char *key, char *value, size_t size)
{
	for (const char *at = out; (at = strstr(at, key)); at++)
		if (at == out || at[-1] == '\n') {
			size_t len = strcspn(at + strlen(key), "\n");
			snprintf(value, size, "%.*s", (int)len, at + strlen(key));
			return value;
		}
	return NULL;
}

/* Says why gdb did not do it, from its output. */
static void mf_attach_gdb_failed(pid_t pid, const char *out, const char *what)
{
	char line[512] = "";
	if (mf_attach_line(out, "mf-error ", line, sizeof(line)))
		mf_say("%s process %d failed: %s", what, (int)pid, line);
	else if (mf_attach_line(out, "ptrace: No such process", line, sizeof(line)) &&
		 !kill(pid, 0))
		mf_say("gdb could not attach to process %d, which exists (ptrace: No such "
		       "process, as gdb may say of a process whose threads keep running); "
		       "nothing was changed in it: try again",
		       (int)pid);
	else if (mf_attach_line(out, "ptrace: ", line, sizeof(line)) ||
		 strstr(out, "Operation not permitted"))
		mf_say("cannot trace process %d: %s%s", (int)pid, line[0] ? line : "not permitted",
		       mf_attach_scope());
	else
		mf_say("%s process %d failed; gdb said:\n%s", what, (int)pid, out);
}

/* A growing text. */
struct mf_attach_text {
	char *s;
	size_t len, cap;
};
static void mf_attach_add(struct mf_attach_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void mf_attach_add(struct mf_attach_text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !t->s)
		return;
	if (t->len + (size_t)n + 1 > t->cap) {
		size_t cap = (t->len + (size_t)n + 1) * 2;
		char *s = realloc(t->s, cap);
		if (!s) {
			free(t->s);
			t->s = NULL;
			return;
		}
		t->s = s, t->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* The functions the scripts call, libc's, looked up in libc with dlsym: gdb may find ld.so's
 * copies first (ld.so's unsetenv works on ld.so's copy of the environment), and a program may
 * define its own (bash keeps its variables apart from libc's environment, which the library
 * reads). Then libc's own name; then the library's functions, looked up through its handle
 * (a program linked with libmalloc_freq_api has functions of those names too, which gdb's
 * lookup by name may find first). */
static const char *const mf_attach_fns[] = {"__errno_location", "getenv",
					    "setenv",		"unsetenv",
					    "putenv",		"munmap",
					    "libc.so.6",	"malloc_freq_attached",
					    "malloc_freq_dir",	"malloc_freq_detach"};
enum {
	MF_FN_ERRNO,
	MF_FN_GETENV,
	MF_FN_SETENV,
	MF_FN_UNSETENV,
	MF_FN_PUTENV,
	MF_FN_MUNMAP,
	MF_FN_LIBC,
	MF_FN_ATTACHED,
	MF_FN_DIR,
	MF_FN_DETACH,
	MF_FN_COUNT
};

/* The strings, one after another, into page: each setting's name and value, the library's
 * path, the functions' names. Their offsets into off (2 per setting, then 1 each); the bytes. */
static size_t mf_attach_strings(char *page, size_t size, const char *const *env, int n,
				const char *lib, size_t *off)
{
	size_t at = 0;
	int k = 0;
	for (int i = 0; i <= 2 * n + MF_FN_COUNT; i++) {
		const char *from, *to;
		if (i < 2 * n) {
			const char *eq = strchr(env[i / 2], '=');
			from = i % 2 ? eq + 1 : env[i / 2];
			to = i % 2 ? from + strlen(from) : eq;
		} else {
			from = i == 2 * n ? lib : mf_attach_fns[i - 2 * n - 1];
			to = from + strlen(from);
		}
		if (at + (size_t)(to - from) + 1 > size)
			return 0;
		off[k++] = at;
		memcpy(page + at, from, (size_t)(to - from));
		at += (size_t)(to - from);
		page[at++] = 0;
	}
	return at;
}

enum { MF_ATTACH_MAX_ENV = 32, MF_ATTACH_PAGE = 65536 };

/* A script's start: a page mapped in the process with the strings (at bytes; gdb's own string
 * literals would be allocated with the program's malloc), libc's functions looked up (fn: their
 * names' offsets), errno kept. Its end: mf_attach_script_end. */
static void mf_attach_script_begin(struct mf_attach_text *t, const char *strings, size_t at,
				   const size_t *fn)
{
	mf_attach_add(t,
		      "set $mf_page = (char *)((void *(*)(void *, unsigned long, int, int, int, "
		      "long))mmap)(0, %d, 3, 34, -1, 0)\n"
		      "if $mf_page == (char *)-1\n"
		      "  printf \"mf-error cannot map a page in the process\\n\"\n"
		      "else\n"
		      "  set {char[%zu]}$mf_page = \"",
		      MF_ATTACH_PAGE, at + 1);
	for (size_t i = 0; i < at; i++) {
		unsigned char c = (unsigned char)strings[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			mf_attach_add(t, "%c", c);
		else
			mf_attach_add(t, "\\%03o", c);
	}
	mf_attach_add(t, "\"\n");
	mf_attach_add(t,
		      "  set $mf_libc = ((void *(*)(const char *, int))dlopen)($mf_page + %zu, "
		      "5)\n",
		      fn[MF_FN_LIBC]);
	for (int f = 0; f < MF_FN_LIBC; f++)
		mf_attach_add(t,
			      "  set $mf_fn%d = ((void *(*)(void *, const char *))dlsym)($mf_libc, "
			      "$mf_page + %zu)\n",
			      f, fn[f]);
	/* (errno first, put back last) */
	mf_attach_add(t,
		      "  set $mf_errno = ((int *(*)(void))$mf_fn%d)()\n"
		      "  set $mf_errno_was = *$mf_errno\n",
		      MF_FN_ERRNO);
}

static void mf_attach_script_end(struct mf_attach_text *t)
{
	mf_attach_add(t,
		      "  call (void)((int (*)(void *, unsigned long))$mf_fn%d)($mf_page, %d)\n"
		      "  set var *$mf_errno = $mf_errno_was\n"
		      "end\n",
		      MF_FN_MUNMAP, MF_ATTACH_PAGE);
}

/* The library's functions, looked up through its handle $mf_handle: $mf_fn7 to $mf_fn9. The
 * handle (a reference more to a library that stays loaded) is not closed. */
static void mf_attach_script_own(struct mf_attach_text *t, const size_t *fn, const char *indent)
{
	for (int f = MF_FN_ATTACHED; f < MF_FN_COUNT; f++)
		mf_attach_add(
		    t,
		    "%sset $mf_fn%d = ((void *(*)(void *, const char *))dlsym)($mf_handle, "
		    "$mf_page + %zu)\n",
		    indent, f, fn[f]);
}

/* Runs the script text and checks that gdb ran it (a line "mf-" key): its output into out
 * (MF_ATTACH_PAGE bytes). 0, or -1 after saying why not (what: "loading the profiler into"). */
static int mf_attach_run(pid_t pid, struct mf_attach_text *t, char *out, const char *key,
			 const char *what)
{
	char line[64];
	if (!t->s || !out) {
		mf_say("out of memory");
		return -1;
	}
	int r = mf_attach_gdb(pid, t->s, out, MF_ATTACH_PAGE);
	if (!r && !mf_attach_line(out, key, line, sizeof(line))) {
		mf_attach_gdb_failed(pid, out, what);
		r = -1;
	}
	return r;
}

int mf_attach_inject(pid_t pid, const char *lib, const char *const *env, char *dir, size_t size)
{
	static char strings[MF_ATTACH_PAGE];
	size_t off[2 * MF_ATTACH_MAX_ENV + MF_FN_COUNT + 1];
	int n = 0;
	while (env[n] && n < MF_ATTACH_MAX_ENV)
		n++;
	if (env[n]) {
		mf_say("more than %d MALLOC_FREQ_* settings to give the process: it cannot be "
		       "attached to with them",
		       MF_ATTACH_MAX_ENV);
		return -1;
	}
	size_t at = mf_attach_strings(strings, MF_ATTACH_PAGE, env, n, lib, off);
	if (!at) {
		mf_say("the settings and the library's path are too long");
		return -1;
	}
	const size_t *fn = off + 2 * n + 1; /* (the functions' names) */
	struct mf_attach_text t = {malloc(4096), 0, 4096};
	mf_attach_script_begin(&t, strings, at, fn);
	/* (a variable the process had is put back as it was) */
	for (int i = 0; i < n; i++)
		mf_attach_add(&t,
			      "  set $mf_had%d = ((char *(*)(const char *))$mf_fn%d)($mf_page + "
			      "%zu)\n"
			      "  call (void)((int (*)(const char *, const char *, int))$mf_fn%d)"
			      "($mf_page + %zu, $mf_page + %zu, 1)\n",
			      i, MF_FN_GETENV, off[2 * i], MF_FN_SETENV, off[2 * i],
			      off[2 * i + 1]);
	/* (loaded, the library is asked whether it records: it makes its directory now; if it
	 * cannot, its work is undone at once, and the process goes on as before) */
	mf_attach_add(&t,
		      "  set $mf_handle = ((void *(*)(const char *, int))dlopen)($mf_page + %zu, "
		      "2)\n"
		      "  if $mf_handle == 0\n"
		      "    set $mf_why = ((char *(*)(void))dlerror)()\n"
		      "    printf \"mf-error %%s\\n\", $mf_why\n"
		      "  else\n"
		      "    printf \"mf-handle %%lx\\n\", $mf_handle\n",
		      off[2 * n]);
	mf_attach_script_own(&t, fn, "    ");
	mf_attach_add(&t,
		      "    if $mf_fn%d == 0 || $mf_fn%d == 0 || $mf_fn%d == 0\n"
		      "      printf \"mf-error the library has no malloc_freq_attached: it is not "
		      "this launcher's\\n\"\n"
		      "    else\n"
		      "      set $mf_started = ((int (*)(void))$mf_fn%d)()\n"
		      "      printf \"mf-started %%d\\n\", $mf_started\n"
		      "      if $mf_started == 0\n"
		      "        set $mf_dir = ((char *(*)(void))$mf_fn%d)()\n"
		      "        if $mf_dir != 0\n"
		      "          printf \"mf-dir %%s\\n\", $mf_dir\n"
		      "        end\n"
		      "      else\n"
		      "        printf \"mf-undone %%d\\n\", ((int (*)(void))$mf_fn%d)()\n"
		      "      end\n"
		      "    end\n"
		      "  end\n",
		      MF_FN_ATTACHED, MF_FN_DIR, MF_FN_DETACH, MF_FN_ATTACHED, MF_FN_DIR,
		      MF_FN_DETACH);
	for (int i = 0; i < n; i++)
		mf_attach_add(&t,
			      "  if $mf_had%d != 0\n"
			      "    call (void)((int (*)(char *))$mf_fn%d)($mf_had%d - %zu)\n"
			      "  else\n"
			      "    call (void)((int (*)(const char *))$mf_fn%d)($mf_page + %zu)\n"
			      "  end\n",
			      i, MF_FN_PUTENV, i, off[2 * i + 1] - off[2 * i], MF_FN_UNSETENV,
			      off[2 * i]);
	mf_attach_script_end(&t);
	char *out = malloc(MF_ATTACH_PAGE), started[64];
	int r = mf_attach_run(pid, &t, out, "mf-started ", "loading the profiler into");
	free(t.s);
	dir[0] = 0;
	if (!r && mf_attach_line(out, "mf-started ", started, sizeof(started)) &&
	    atoi(started) != 0)
		r = -atoi(started) > 0 ? -atoi(started) : EIO; /* (the caller says it) */
	if (!r)
		mf_attach_line(out, "mf-dir ", dir, size);
	free(out);
	return r;
}

int mf_attach_detach(pid_t pid, char *dir, size_t size)
{
	static char strings[MF_ATTACH_PAGE];
	char lib[4096], result[64], started[64];
	size_t off[MF_FN_COUNT + 1];
	dir[0] = 0;
	if (mf_attach_loaded(pid, lib, sizeof(lib)) <= 0) {
		mf_say("process %d is not profiled", (int)pid);
		return -1;
	}
	size_t at = mf_attach_strings(strings, MF_ATTACH_PAGE, NULL, 0, lib, off);
	if (!at) {
		mf_say("the library's path is too long: %s", lib);
		return -1;
	}
	const size_t *fn = off + 1;
	struct mf_attach_text t = {malloc(4096), 0, 4096};
	mf_attach_script_begin(&t, strings, at, fn);
	/* (the library by its path, RTLD_NOLOAD: the one loaded, never another) */
	mf_attach_add(&t,
		      "  set $mf_handle = ((void *(*)(const char *, int))dlopen)($mf_page + %zu, "
		      "5)\n"
		      "  if $mf_handle == 0\n"
		      "    printf \"mf-error the profiler's library is not loaded as %%s\\n\", "
		      "$mf_page + %zu\n"
		      "  else\n",
		      off[0], off[0]);
	mf_attach_script_own(&t, fn, "    ");
	mf_attach_add(&t,
		      "    if $mf_fn%d == 0 || $mf_fn%d == 0\n"
		      "      printf \"mf-error the library loaded has no malloc_freq_detach\\n\"\n"
		      "    else\n"
		      "      if $mf_fn%d != 0\n"
		      "        printf \"mf-started %%d\\n\", ((int (*)(void))$mf_fn%d)()\n"
		      "      end\n"
		      "      set $mf_dir = ((char *(*)(void))$mf_fn%d)()\n"
		      "      if $mf_dir != 0\n"
		      "        printf \"mf-dir %%s\\n\", $mf_dir\n"
		      "      end\n"
		      "      printf \"mf-result %%d\\n\", ((int (*)(void))$mf_fn%d)()\n"
		      "    end\n"
		      "  end\n",
		      MF_FN_DIR, MF_FN_DETACH, MF_FN_ATTACHED, MF_FN_ATTACHED, MF_FN_DIR,
		      MF_FN_DETACH);
	mf_attach_script_end(&t);
	char *out = malloc(MF_ATTACH_PAGE);
	int r = mf_attach_run(pid, &t, out, "mf-result ", "detaching from");
	free(t.s);
	int start =
	    !r && mf_attach_line(out, "mf-started ", started, sizeof(started)) ? atoi(started) : 0;
	int res = r ? 0 : atoi(mf_attach_line(out, "mf-result ", result, sizeof(result)));
	if (r) {
	} else if (start == -ENOSYS) {
		mf_say("the profiler loaded into process %d could not start there (its standard "
		       "error said why): it recorded nothing, and passes every call on",
		       (int)pid);
		r = -1;
	} else if (start < 0 && start != -EPERM) {
		mf_say("process %d never recorded: it could not make its profile directory (%s) "
		       "when attached to, and the profiler undid itself then; nothing to detach",
		       (int)pid, strerror(-start));
		r = -1;
	} else if (res == -EPERM) {
		mf_say("process %d was started under the profiler, not attached to: it "
		       "records until it ends",
		       (int)pid);
		r = -1;
	} else if (res == -EALREADY) {
		mf_say("process %d was detached from already", (int)pid);
		r = -1;
	} else if (res != 0) {
		mf_say("process %d: some of its calls could not be led back to the "
		       "allocator; recording has stopped",
		       (int)pid);
	}
	if (!r)
		mf_attach_line(out, "mf-dir ", dir, size);
	free(out);
	return r;
}
