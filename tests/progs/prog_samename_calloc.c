/* prog_samename's function named calloc: no header declares the real one here, and the test
 * programs are built with -fno-builtin, so this file's own static calloc is a function like
 * any other (it calls malloc). */
typedef __SIZE_TYPE__ size_t;
void *malloc(size_t n);
void free(void *p);

static void *volatile sink;

__attribute__((noinline)) static void *calloc(size_t n, size_t m)
{
	void *volatile p = malloc(n * m); /* (not a tail call: this frame stays) */
	return p;
}

void named_calls(int n)
{
	for (int i = 0; i < n; i++) {
		sink = calloc(1, 16);
		free(sink);
	}
}
