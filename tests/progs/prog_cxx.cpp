// C++ under the profiler: new/delete from known sites, containers, and exceptions thrown while
// allocating (std::bad_alloc from a huge new, and a throw whose object the runtime allocates).
// Prints what it caught; counts known by construction. Usage: prog_cxx
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

struct Node {
	long v[4];
};

static char *volatile keep; // a new whose result is unused may be removed by the compiler

__attribute__((noinline)) static void site_new(int n)
{
	for (int i = 0; i < n; i++) {
		Node *volatile p = new Node();
		delete p;
	}
}

__attribute__((noinline)) static int site_throw(int n)
{
	int caught = 0;
	for (int i = 0; i < n; i++) {
		try {
			throw std::runtime_error("thrown while allocating");
		} catch (const std::runtime_error &) {
			caught++;
		}
	}
	return caught;
}

__attribute__((noinline)) static int site_bad_alloc()
{
	try {
		volatile size_t huge = (size_t)1 << 62;
		keep = new char[huge];
		delete[] keep;
	} catch (const std::bad_alloc &) {
		return 1;
	}
	return 0;
}

int main()
{
	site_new(1234);
	int caught = site_throw(300);
	int bad = site_bad_alloc();
	std::vector<std::string> v;
	for (int i = 0; i < 100; i++)
		v.push_back(std::string(40, 'x'));
	std::printf("caught %d runtime_error, bad_alloc %d, %zu strings\n", caught, bad, v.size());
	return 0;
}
