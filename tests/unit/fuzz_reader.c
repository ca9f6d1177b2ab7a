/* libFuzzer harness for mf_print's reader: the first byte picks the kind of file (3: a process
 * record, other odd values: a module map, 6 modulo 8: a pack of ended threads' files, 14
 * modulo 16 the same with its records' checks made to match, so that what lies past a check is
 * reached; other even ones: a thread profile), the rest is its contents.
 * Built and run by `make fuzz` (clang -fsanitize=fuzzer,address,undefined). */
#include "config.h"

#include <stdint.h>

#include "reader_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	mf_exercise(data, size, err, sizeof(err));
	return 0;
}
