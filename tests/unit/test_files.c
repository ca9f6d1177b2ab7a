/* Where the profiler writes: symlinks planted at the names it would use are never followed
 * (the directory and the thread file take the next free name), what it creates is its
 * owner's only, and existing files are never overwritten. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/fork.h"
#include "../../lib/life/life.h"
#include "../../lib/loaded.h"
#include "../../lib/mf_internal.h"
#include "../../lib/thread.h"
#include "../tap.h"

/* What the module map tells stack capture (code was unloaded): nothing to forget here; and
 * the thread state it reads (whether signals are blocked already). */
void mf_unwind_forget(void) {}
MF_TLS struct mf_tls mf_tls;
pthread_rwlock_t mf_fork_lock = PTHREAD_RWLOCK_INITIALIZER;
unsigned mf_fork_pending;
void mf_fork_wait(void) {}
int mf_life_on; /* (lifetimes off: lib/life/ is not linked) */
/* (no seccomp strict mode here: lib/confine.c is not linked) */
MF_TLS int mf_confined;
pid_t mf_confine_pid(void)
{
	return getpid();
}

static int empty_dir(const char *path)
{
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", path);
	return system(cmd) == 0;
}

int main(void)
{
	char dir[] = "/tmp/mf_files.XXXXXX", path[4200], victim[4200], link[4200];
	if (!mkdtemp(dir))
		tap_bail("mkdtemp");
	umask(0);
	setenv("MALLOC_FREQ_DIR", dir, 1);
	mf_config_load();
	mf_modules_init();
	int pid = getpid();

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	mkdir(victim, 0700);
	snprintf(link, sizeof(link), "%s/malloc_freq.%d", dir, pid);
	if (symlink(victim, link))
		tap_bail("symlink");
	tap_ok(mf_prof_dir_ensure() == 0,
	       "a directory is made although its name is a planted symlink");
	snprintf(path, sizeof(path), "%s/malloc_freq.%d.1", dir, pid);
	tap_ok(mf_prof_dir() && !strcmp(mf_prof_dir(), path), "it is the next name, %s",
	       mf_prof_dir());
	tap_ok(empty_dir(victim), "nothing was written through the symlink");

	char victim_file[4200];
	snprintf(victim_file, sizeof(victim_file), "%s/victim_file", dir);
	int fd = open(victim_file, O_CREAT | O_WRONLY, 0600);
	close(fd);
	snprintf(link, sizeof(link), "%s/4242.prof", mf_prof_dir());
	if (symlink(victim_file, link))
		tap_bail("symlink");
	snprintf(path, sizeof(path), "%s/4243.prof", mf_prof_dir());
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0 || write(fd, "keep", 4) != 4)
		tap_bail("cannot make 4243.prof");
	close(fd);

	struct mf_prof_file f;
	memset(&f, 0, sizeof(f));
	tap_ok(mf_prof_open(&f, 4242) == 0,
	       "a thread file is made although its name is a planted symlink");
	snprintf(path, sizeof(path), "%s/4242.1.prof", mf_prof_dir());
	tap_ok(!strcmp(f.path, path), "it is the next name, 4242.1.prof");
	struct stat st;
	tap_ok(stat(victim_file, &st) == 0 && st.st_size == 0,
	       "nothing was written through the symlink");
	struct mf_prof_file g;
	memset(&g, 0, sizeof(g));
	tap_ok(mf_prof_open(&g, 4243) == 0, "a thread whose name is taken by a file gets a file");
	snprintf(path, sizeof(path), "%s/4243.prof", mf_prof_dir());
	char buf[8] = "";
	fd = open(path, O_RDONLY);
	tap_ok(fd >= 0 && read(fd, buf, sizeof(buf)) == 4 && !memcmp(buf, "keep", 4),
	       "the existing file was not overwritten");
	close(fd);

	struct stat sd, sf;
	int okd = stat(mf_prof_dir(), &sd) == 0, okf = stat(f.path, &sf) == 0;
	tap_ok(okd && (sd.st_mode & 07777) == 0700,
	       "with umask 0 the directory is its owner's only (%o)", sd.st_mode & 07777);
	tap_ok(okf && (sf.st_mode & 07777) == 0600, "and so is the thread file (%o)",
	       sf.st_mode & 07777);
	mf_prof_close(&f);
	mf_prof_close(&g);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}
