/* Truncations of real profiles, module maps and process records (every length through the first
 * page and 512 bytes past it, then every 7th, which meets every offset within a 32-byte node, as
 * a stride of 8 or 16 would not), and 5000 random byte changes (fixed seed): the
 * reader accepts the input or rejects it with a message, and whatever it accepts goes through every
 * report; never a crash, a hang or a leak (CI runs this under ASan). Inputs: the files in
 * tests/fixtures/fuzz_corpus, whose first byte says the kind (see reader_exercise.h). */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>

#include "reader_exercise.h"
#include "../tap.h"

#define ROBUST_CHANGES 5000

int main(void)
{
	const char *srcdir = getenv("srcdir") ? getenv("srcdir") : ".";
	char dir[4096], path[8192], err[512];
	snprintf(dir, sizeof(dir), "%s/tests/fixtures/fuzz_corpus", srcdir);
	/* (in the names' order: the same changes to the same files on every machine) */
	struct dirent **names;
	int count = scandir(dir, &names, NULL, alphasort);
	if (count < 0)
		tap_bail("no tests/fixtures/fuzz_corpus");
	int files = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < count; free(names[i]), i++) {
		const struct dirent *e = names[i];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unsigned char *data;
		size_t size;
		if (mf_read_file(path, 1 << 24, &data, &size) || size < 2)
			tap_bail(path);
		files++;
		int whole = mf_exercise(data, size, err, sizeof(err));
		tap_ok(whole == 0, "%s: the whole file is accepted %s", e->d_name, err);
		int silent = 0, accepted = 0;
		int cuts = 0;
		for (size_t n = 1; n < size; n += n < 4096 + 512 ? 1 : 7, cuts++) {
			int r = mf_exercise(data, n, err, sizeof(err));
			accepted += r == 0;
			silent += r != 0 && !err[0];
		}
		tap_ok(silent == 0, "%s: %d truncations are accepted or named (%d accepted)",
		       e->d_name, cuts, accepted);
		unsigned char *copy = malloc(size);
		silent = accepted = 0;
		for (int k = 0; k < ROBUST_CHANGES; k++) {
			memcpy(copy, data, size);
			for (int flips = 0; flips < 1 + k % 4; flips++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				size_t at = 1 + (size_t)(rng % (size - 1));
				/* half the changes hit the header, where the checks are */
				if (k % 2 && size > 4097)
					at = 1 + (size_t)(rng % 4096);
				copy[at] = (unsigned char)(rng >> 32);
			}
			int r = mf_exercise(copy, size, err, sizeof(err));
			accepted += r == 0;
			silent += r != 0 && !err[0];
		}
		tap_ok(silent == 0, "%s: %d random changes are accepted or named (%d accepted)",
		       e->d_name, ROBUST_CHANGES, accepted);
		/* a thread profile (even kind) of version 4 naming records no reader knows, its
		 * nodes unaligned (after the kind byte) so that they are copied: refused, the copy
		 * freed (libFuzzer found it kept) */
		if (data[0] % 2 == 0 && (data[0] & 7) != 6 &&
		    size > 1 + sizeof(struct mf_prof_header)) {
			struct mf_prof_header h;
			memcpy(copy, data, size);
			memcpy(&h, copy + 1, sizeof(h));
			h.version = 4, h.records = 0xf0f0f0f0;
			h.header_size = MF_HEADER_SIZE_V10; /* (a version 4 header's) */
			memcpy(copy + 1, &h, sizeof(h));
			int r = mf_exercise(copy, size, err, sizeof(err));
			tap_ok(r != 0 && strstr(err, "records"), "%s: unknown records refused (%s)",
			       e->d_name, err);
		}
		free(copy);
		free(data);
	}
	free(names);
	tap_ok(files >= 2, "%d corpus files read", files);
	/* a pack whose first record's thread header is changed (its header_size): its check no
	 * longer matches, which is all a fuzzer would see; sealed (kind 14), the reader goes on to
	 * the header */
	snprintf(path, sizeof(path), "%s/ended.pack", dir);
	unsigned char *pack;
	size_t pack_size;
	if (mf_read_file(path, 1 << 24, &pack, &pack_size) || pack_size < 1 + 96)
		tap_bail(path);
	pack[1 + 96 + 16] ^= 0x40;
	int r = mf_exercise(pack, pack_size, err, sizeof(err));
	tap_ok(r && strstr(err, "check does not match"), "a pack's changed header: its check (%s)",
	       err);
	pack[0] = 14;
	r = mf_exercise(pack, pack_size, err, sizeof(err));
	tap_ok(r && strstr(err, "header does not fit"), "... sealed: the header itself (%s)", err);
	free(pack);
	return tap_done();
}
