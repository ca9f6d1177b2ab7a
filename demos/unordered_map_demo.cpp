// malloc_freq demo: filling a std::unordered_map with and without reserve(). Both make one
// node allocation per element; without reserve() the table also rehashes as it grows, and
// every rehash allocates a new, larger bucket array (std::__detail::_Hashtable_alloc::
// _M_allocate_buckets under _M_rehash). The profile shows those calls and their bytes under
// fill_without_reserve() only.
#include <cstdio>
#include <unordered_map>

static const int N = 200000;

__attribute__((noinline)) static long fill_without_reserve()
{
	std::unordered_map<int, int> m;
	for (int i = 0; i < N; i++)
		m[i] = i;
	return (long)m.size();
}

__attribute__((noinline)) static long fill_with_reserve()
{
	std::unordered_map<int, int> m;
	m.reserve(N);
	for (int i = 0; i < N; i++)
		m[i] = i;
	return (long)m.size();
}

int main()
{
	long a = fill_without_reserve();
	long b = fill_with_reserve();
	std::printf("unordered_map_demo: %ld + %ld elements\n", a, b);
	return 0;
}
