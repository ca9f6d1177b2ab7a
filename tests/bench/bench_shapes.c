/* Benchmark workloads, the stack shapes of real code, with counts known by construction:
 *   wrapperK       xmalloc reached by K = 2, 4 or 16 paths in turn, all 6 frames below main
 *   wrap4-depthD   the same with 4 paths, the whole stack D = 10 or 30 frames deep
 *   unrolled       one function called from 4 return addresses in a row
 *   depthD         one site D = 3, 10 or 30 frames below main
 *   recursive      a recursion 1 to 31 deep, at a different depth at each call
 *   mix            2 threads, each taking 7 of these in turn
 * Each allocation is a malloc and free of a small block. "expect" allocates nothing and prints
 * each stack the run would make (collapsed, from main or mix_thread to malloc) and its calls.
 * Usage: bench_shapes SHAPE ITERATIONS [expect] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* noclone: stacks name the functions as written; distinct bodies keep -fipa-icf from merging */
#define NOINLINE __attribute__((noinline, noclone))
#define NO_TAIL	 __asm__ volatile("" ::: "memory") /* after a call: keep the caller's frame */
#define SIZE(i)	 (16 + (size_t)(i) % 16)

static __thread void *volatile sink;
typedef void (*leaf_fn)(long i);

NOINLINE static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	return p;
}

/* A wrapper's callers: 16 paths of 3 functions, each reaching xmalloc at the same depth. */
#define PATH(p)                                                                                    \
	NOINLINE static void path##p##_3(long i)                                                   \
	{                                                                                          \
		sink = xmalloc(SIZE(i) + p);                                                       \
		free(sink);                                                                        \
	}                                                                                          \
	NOINLINE static void path##p##_2(long i)                                                   \
	{                                                                                          \
		path##p##_3(i);                                                                    \
		NO_TAIL;                                                                           \
	}                                                                                          \
	NOINLINE static void path##p##_1(long i)                                                   \
	{                                                                                          \
		path##p##_2(i);                                                                    \
		NO_TAIL;                                                                           \
	}
/* (one macro of definitions a line: with no statement after it, clang-format would indent the
 * next as its continuation) */
/* clang-format off */
PATH(0)
PATH(1)
PATH(2)
PATH(3)
PATH(4)
PATH(5)
PATH(6)
PATH(7)
PATH(8)
PATH(9)
PATH(10)
PATH(11)
PATH(12)
PATH(13)
PATH(14)
PATH(15)
/* clang-format on */
static const leaf_fn paths[16] = {
    path0_1, path1_1, path2_1,	path3_1,  path4_1,  path5_1,  path6_1,	path7_1,
    path8_1, path9_1, path10_1, path11_1, path12_1, path13_1, path14_1, path15_1,
};

/* Sites that call malloc themselves. */
#define SITE(d)                                                                                    \
	NOINLINE static void site##d(long i)                                                       \
	{                                                                                          \
		sink = malloc(SIZE(i) + d);                                                        \
		free(sink);                                                                        \
	}
SITE(3)
SITE(10)
SITE(30)

/* Depth: chain_K calls chain_K+1 ... chain_27, which calls the leaf; entering at chain_28-L
 * puts L frames between the step and the leaf. */
#define CHAIN 27
#define LINK(k, next)                                                                              \
	NOINLINE static void chain_##k(long i, leaf_fn leaf)                                       \
	{                                                                                          \
		next(i, leaf);                                                                     \
		NO_TAIL;                                                                           \
	}
NOINLINE static void chain_27(long i, leaf_fn leaf)
{
	leaf(i);
	NO_TAIL;
}
/* clang-format off */
LINK(26, chain_27)
LINK(25, chain_26)
LINK(24, chain_25)
LINK(23, chain_24)
LINK(22, chain_23)
LINK(21, chain_22)
LINK(20, chain_21)
LINK(19, chain_20)
LINK(18, chain_19)
LINK(17, chain_18)
LINK(16, chain_17)
LINK(15, chain_16)
LINK(14, chain_15)
LINK(13, chain_14)
LINK(12, chain_13)
LINK(11, chain_12)
LINK(10, chain_11)
LINK(9, chain_10)
LINK(8, chain_9)
LINK(7, chain_8)
LINK(6, chain_7)
LINK(5, chain_6)
LINK(4, chain_5)
LINK(3, chain_4)
LINK(2, chain_3)
LINK(1, chain_2)
/* clang-format on */
static void (*const chain[CHAIN + 1])(long, leaf_fn) = {
    NULL,     chain_1,	chain_2,  chain_3,  chain_4,  chain_5,	chain_6,
    chain_7,  chain_8,	chain_9,  chain_10, chain_11, chain_12, chain_13,
    chain_14, chain_15, chain_16, chain_17, chain_18, chain_19, chain_20,
    chain_21, chain_22, chain_23, chain_24, chain_25, chain_26, chain_27,
};
#define LINKS(l, i, leaf) chain[CHAIN + 1 - (l)](i, leaf)

/* The unrolled loop: item is called from 4 return addresses in a row, as a compiler unrolls
 * `for (j = 0; j < 4; j++) item(i + j)` (gcc 12 at -O2 does not, so this is unrolled by hand;
 * the copies share a source line, as a compiler's do). */
#define UNROLL 4
NOINLINE static void item(long i)
{
	sink = xmalloc(SIZE(i) + 64);
	free(sink);
}

/* The recursion: `recurse` 1 to 31 times, by steps of 7: no two calls in a row at one depth. */
#define RECURSION 31
static int recursion_depth(long i)
{
	return 1 + (int)(i * 7 % RECURSION);
}
NOINLINE static void recurse(int d, long i)
{
	if (d > 1) {
		recurse(d - 1, i);
		NO_TAIL;
		return;
	}
	sink = malloc(SIZE(i));
	free(sink);
}

/* The steps; a stack's depth counts the frames between main and malloc (run and the step too).
 * The wrappers' stacks are 6 deep. */
#define STEP(name, body)                                                                           \
	NOINLINE static void step_##name(long i)                                                   \
	{                                                                                          \
		body;                                                                              \
		NO_TAIL;                                                                           \
	}
STEP(wrapper2, paths[i % 2](i))
STEP(wrapper4, paths[i % 4](i))
STEP(wrapper16, paths[i % 16](i))
STEP(wrap4_depth10, LINKS(4, i, paths[i % 4]))
STEP(wrap4_depth30, LINKS(24, i, paths[i % 4]))
STEP(unrolled, (item(i), item(i + 1), item(i + 2), item(i + 3)))
STEP(depth3, site3(i))
STEP(depth10, LINKS(7, i, site10))
STEP(depth30, LINKS(27, i, site30))
STEP(recursive, recurse(recursion_depth(i), i))

enum kind { WRAPPER, UNROLLED, SITE, RECURSIVE, MIX };
static const struct shape {
	const char *name;
	leaf_fn step;
	enum kind kind;
	int paths; /* WRAPPER: the paths taken in turn */
	int links; /* WRAPPER, SITE: the chain's frames above the paths or the site */
	int depth; /* SITE: its depth */
} shapes[] = {
    {"wrapper2", step_wrapper2, WRAPPER, 2, 0, 0},
    {"wrapper4", step_wrapper4, WRAPPER, 4, 0, 0},
    {"wrapper16", step_wrapper16, WRAPPER, 16, 0, 0},
    {"wrap4-depth10", step_wrap4_depth10, WRAPPER, 4, 4, 0},
    {"wrap4-depth30", step_wrap4_depth30, WRAPPER, 4, 24, 0},
    {"unrolled", step_unrolled, UNROLLED, 0, 0, 0},
    {"depth3", step_depth3, SITE, 0, 0, 3},
    {"depth10", step_depth10, SITE, 0, 7, 10},
    {"depth30", step_depth30, SITE, 0, 27, 30},
    {"recursive", step_recursive, RECURSIVE, 0, 0, 0},
    {"mix", NULL, MIX, 0, 0, 0},
};
#define N_SHAPES (int)(sizeof(shapes) / sizeof(shapes[0]))
#define MIXED	 7 /* the mix takes shapes[1], [3], [4], [5], [7], [8], [9] in turn */
static const struct shape *const mixed[MIXED] = {&shapes[1], &shapes[3], &shapes[4], &shapes[5],
						 &shapes[7], &shapes[8], &shapes[9]};

NOINLINE static void step_mix(long i)
{
	mixed[i % MIXED]->step(i / MIXED);
	NO_TAIL;
}

NOINLINE static void run(leaf_fn step, long iterations)
{
	for (long i = 0; i < iterations; i++)
		step(i);
	NO_TAIL;
}

static long iterations;
static void *mix_thread(void *arg)
{
	(void)arg;
	run(step_mix, iterations);
	return NULL;
}

/* Expect mode: how many of the i in [0, n) have i % k == r. */
static long count(long n, long k, long r)
{
	return n / k + (r < n % k);
}

/* Prints each stack that n steps of shape s make below the frames in ROOT, and its calls (times
 * `threads`: the threads' stacks are the same). */
static void expect(const char *root, const struct shape *s, long n, int threads)
{
	int keys = s->kind == WRAPPER ? s->paths : s->kind == RECURSIVE ? RECURSION : 1;
	for (int r = 0; r < keys; r++) {
		printf("%s;step_", root);
		for (const char *c = s->name; *c; c++)
			putchar(*c == '-' ? '_' : *c);
		for (int k = CHAIN + 1 - s->links; k <= CHAIN; k++)
			printf(";chain_%d", k);
		if (s->kind == WRAPPER)
			printf(";path%d_1;path%d_2;path%d_3;xmalloc", r, r, r);
		else if (s->kind == UNROLLED)
			printf(";item;xmalloc");
		else if (s->kind == SITE)
			printf(";site%d", s->depth);
		else /* step i recurses recursion_depth(i % RECURSION) times */
			for (int d = recursion_depth(r); d > 0; d--)
				printf(";recurse");
		printf(";malloc %ld\n",
		       count(n, keys, r) * threads * (s->kind == UNROLLED ? UNROLL : 1));
	}
}

int main(int argc, char **argv)
{
	int s = 0;
	while (argc > 1 && s < N_SHAPES && strcmp(argv[1], shapes[s].name))
		s++;
	if (argc < 3 || argc > 4 || s == N_SHAPES || (argc == 4 && strcmp(argv[3], "expect"))) {
		fprintf(stderr, "usage: bench_shapes SHAPE ITERATIONS [expect]; SHAPE one of");
		for (int k = 0; k < N_SHAPES; k++)
			fprintf(stderr, " %s", shapes[k].name);
		fprintf(stderr, "\n");
		return 2;
	}
	iterations = atol(argv[2]);
	int mix = shapes[s].kind == MIX;
	if (argc == 4) {
		if (!mix)
			expect("main;run", &shapes[s], iterations, 1);
		for (int m = 0; mix && m < MIXED; m++) /* step_mix(i) takes step i / MIXED */
			expect("mix_thread;run;step_mix", mixed[m], count(iterations, MIXED, m), 2);
		return 0;
	}
	if (mix) {
		pthread_t t[2];
		for (int k = 0; k < 2; k++)
			if (pthread_create(&t[k], NULL, mix_thread, NULL))
				return 3;
		for (int k = 0; k < 2; k++)
			pthread_join(t[k], NULL);
	} else {
		run(shapes[s].step, iterations);
	}
	printf("bench_shapes: %s, %ld iterations\n", shapes[s].name, iterations);
	return 0;
}
