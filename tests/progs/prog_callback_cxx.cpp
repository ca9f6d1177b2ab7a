// dl_iterate_phdr callbacks left by a C++ throw: THREADS threads (main among them) each make N
// callbacks that allocate once (site_thrown) and throw, each throw caught around
// dl_iterate_phdr, then N calls after them (site_after). glibc's dl_iterate_phdr releases its
// loader lock as the exception passes.
// Prints "throws: THREADS x N caught". Usage: prog_callback_cxx THREADS N
#include <link.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>

static thread_local void *volatile sink;

__attribute__((noinline)) static void site_thrown()
{
	sink = malloc(24);
	free(sink);
}

__attribute__((noinline)) static void site_after()
{
	sink = malloc(40);
	free(sink);
}

static long n;

static int callback_throw(struct dl_phdr_info *, size_t, void *)
{
	site_thrown();
	throw 1;
}

static void *worker(void *arg)
{
	long caught = 0;
	for (long i = 0; i < n; i++)
		try {
			dl_iterate_phdr(callback_throw, nullptr);
		} catch (int) {
			caught++;
		}
	for (long i = 0; i < n; i++)
		site_after();
	*static_cast<long *>(arg) = caught;
	return nullptr;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	n = argc > 2 ? atol(argv[2]) : 100;
	if (threads < 1 || threads > 16)
		return 2;
	pthread_t t[16];
	long caught[16] = {0};
	for (int i = 1; i < threads; i++)
		pthread_create(&t[i], nullptr, worker, &caught[i]);
	worker(&caught[0]);
	long all = caught[0];
	for (int i = 1; i < threads; i++) {
		pthread_join(t[i], nullptr);
		all += caught[i];
	}
	std::printf("throws: %d x %ld caught\n", threads, all / threads);
	return all == threads * n ? 0 : 1;
}
