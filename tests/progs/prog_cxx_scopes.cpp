/* Functions of one name in different scopes, which GCC's debug info names bare (internal
 * linkage has no linkage name): a static member of a class in an anonymous namespace, and a
 * static function in a namespace, each called with a constant (GCC -O2 clones them:
 * "[clone .constprop.0]"), and a lambda. Counts: Parser::parse 201 (new[]), Parser::reset 202,
 * ns::Lexer::parse 203, ns::reset 204, the lambda 205 (malloc). Prints "ok". */
#include <cstdio>
#include <cstdlib>

#define NOINLINE __attribute__((noinline))
#define KEEP(p)	 __asm__ volatile("" ::"r"(p) : "memory")

namespace {
struct Parser {
	NOINLINE void parse(int n);
	NOINLINE static void reset(int n);
};
void Parser::parse(int n)
{
	for (int i = 0; i < n; i++) {
		int *p = new int[4];
		KEEP(p);
		delete[] p;
	}
}
void Parser::reset(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(24);
		KEEP(p);
		free(p);
	}
}
} // namespace

namespace ns {
struct Lexer {
	NOINLINE void parse(int n);
};
void Lexer::parse(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(40);
		KEEP(p);
		free(p);
	}
}
static NOINLINE void reset(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(56);
		KEEP(p);
		free(p);
	}
}
} // namespace ns

NOINLINE static void lambda_site(int n)
{
	auto f = [](int k) __attribute__((noinline)) {
		void *p = malloc(72 + (size_t)k % 8);
		KEEP(p);
		free(p);
	};
	for (int i = 0; i < n; i++)
		f(i);
}

int main()
{
	Parser p;
	p.parse(201);
	Parser::reset(202);
	ns::Lexer l;
	l.parse(203);
	ns::reset(204);
	lambda_site(205);
	puts("ok");
	return 0;
}
