/* Code no unwind table covers, as a JIT compiler makes it: a function copied into anonymous
 * executable memory that keeps a frame pointer (push rbp; mov rbp, rsp; locals below), and
 * calls the function it is given. main -> outer -> [jit] -> relay -> [jit] -> site -> malloc,
 * N times: N calls at one stack. Then "maps": prints the lines of /proc/self/maps that name
 * libunwind (none when the profiler did without it). Usage: prog_jit N [maps] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *volatile sink;
typedef void (*fn)(void (*)(void));
static fn jit;

/* push rbp; mov rbp,rsp; sub rsp,32; mov rax,rdi; call rax; leave; ret */
static const unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x20,
				     0x48, 0x89, 0xf8, 0xff, 0xd0, 0xc9, 0xc3};

__attribute__((noinline)) static void site(void)
{
	sink = malloc(40);
	free(sink);
}

__attribute__((noinline)) static void relay(void)
{
	jit(site);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) static void outer(int n)
{
	for (int i = 0; i < n; i++)
		jit(relay);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	unsigned char *m =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	memcpy(m, code, sizeof(code));
	if (mprotect(m, 4096, PROT_READ | PROT_EXEC))
		return 1;
	jit = (fn)(void *)m;
	outer(n);
	if (argc > 2 && !strcmp(argv[2], "maps")) {
		char line[4096];
		FILE *f = fopen("/proc/self/maps", "r");
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "libunwind"))
				fputs(line, stdout);
		if (f)
			fclose(f);
	}
	puts("done");
	return 0;
}
