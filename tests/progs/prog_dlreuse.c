/* Loads FIRST, calls its function (fa or fb) N times, which calls back site(); unloads it;
 * then the same with SECOND, which the loader may map where FIRST was. Prints, for each, the
 * return address into the library that site() saw: where both are one address, one return
 * address stood in frames of two different rules (tests/progs/dlreuse_rsp.S, dlreuse_rbp.S).
 * Usage: prog_dlreuse FIRST.so SECOND.so N */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;
static void *ra;

__attribute__((noinline)) static void site(void)
{
	ra = __builtin_return_address(0);
	sink = malloc(24);
	free(sink);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void run(void (*f)(void (*)(void)), long n)
{
	for (long i = 0; i < n; i++)
		f(site);
	__asm__ volatile("" ::: "memory"); /* not a tail call: run keeps its frame */
}

/* Loads path, runs its function n times and unloads it; 0, or the exit status. */
__attribute__((noinline)) static int one(const char *path, long n)
{
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 3;
	}
	void *f = dlsym(h, "fa");
	if (!f)
		f = dlsym(h, "fb");
	if (!f)
		return 4;
	run((void (*)(void (*)(void)))f, n);
	printf("%p\n", ra);
	fflush(stdout); /* (before the second library: a crash there keeps this line) */
	return dlclose(h) ? 5 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long n = atol(argv[3]);
	int rc = one(argv[1], n);
	if (!rc)
		rc = one(argv[2], n);
	__asm__ volatile("" ::: "memory"); /* not a tail call: main keeps its frame */
	return rc;
}
