/* A program whose own function has an allocation function's name: named_calls() reaches a
 * static function called calloc (tests/progs/prog_samename_calloc.c) that calls malloc 20 times,
 * and main calls the real calloc 30 times. --dot keeps the two apart. */
#include <stdlib.h>

void named_calls(int n);

static void *volatile sink;

__attribute__((noinline)) static void site_real(void)
{
	sink = calloc(1, 24);
	free(sink);
}

int main(void)
{
	named_calls(20);
	for (int i = 0; i < 30; i++)
		site_real();
	return 0;
}
