/* libFuzzer harness for mf_print's reader: the first byte picks the kind of file (even: a
 * thread profile, odd: a module map), the rest is its contents. Built and run by
 * `make fuzz` (clang -fsanitize=fuzzer,address,undefined). */
#include "config.h"

#include <stdint.h>

#include "reader_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	if (size < 1)
		return 0;
	if (data[0] & 1)
		mf_exercise_modules(data + 1, size - 1, err, sizeof(err));
	else
		mf_exercise_profile(data + 1, size - 1, err, sizeof(err));
	return 0;
}
