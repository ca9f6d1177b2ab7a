/* A peak of live bytes known to the byte, in one thread, with changes far smaller than the
 * profiler's batch (64 KiB) on both sides of it:
 *   site_a    1000 blocks of 100 bytes, kept                        live 100,000
 *   site_b    2000 blocks of 50 bytes                                live 200,000 (a maximum)
 *             1000 of them freed                                     live 150,000
 *   site_c    1000 blocks of 40 bytes, then all freed                live 190,000, 150,000
 *   site_d    1001 blocks of 52 bytes                                live 202,052: the peak
 *             one of them freed, then site_e 10 blocks of 4 bytes    live 202,040
 * At the peak: site_a 1000 blocks, site_b 1000, site_c 0, site_d 1001, site_e 0; 3001 blocks
 * of 202,052 bytes. (Each site its own size: equal functions would be folded into one.) Then the
 * program exits (leaking all), or with "kill" kills itself, so that its files are read as it left
 * them. Usage: prog_peak [kill] */
#define _GNU_SOURCE /* RTLD_DEFAULT (glibc before 2.34 declares it only so) */
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define SITE(name, n)                                                                              \
	NOINLINE static void *name(void)                                                           \
	{                                                                                          \
		void *p = malloc(n);                                                               \
		__asm__ volatile("" ::: "memory"); /* not a tail call: the site keeps its frame */ \
		return p;                                                                          \
	}

static void *a[1000], *b[2000], *c[1000], *d[1001], *e[10];

SITE(site_a, 100)
SITE(site_b, 50)
SITE(site_c, 40)
SITE(site_d, 52)
SITE(site_e, 4)

int main(int argc, char **argv)
{
	int (*snapshot)(const char *) =
	    (int (*)(const char *))dlsym(RTLD_DEFAULT, "malloc_freq_snapshot");
	for (int i = 0; i < 1000; i++) {
		if (i == 500 && argc > 1 && !strcmp(argv[1], "snap-kill") && snapshot)
			snapshot("before");
		a[i] = site_a();
	}
	for (int i = 0; i < 2000; i++)
		b[i] = site_b();
	for (int i = 0; i < 1000; i++)
		free(b[i]);
	for (int i = 0; i < 1000; i++)
		c[i] = site_c();
	for (int i = 0; i < 1000; i++)
		free(c[i]);
	for (int i = 0; i < 1001; i++)
		d[i] = site_d();
	free(d[0]);
	for (int i = 0; i < 10; i++)
		e[i] = site_e();
	if (argc > 1 && strstr(argv[1], "kill"))
		raise(SIGKILL);
	return 0;
}
