/* Blocks handed to another thread at once (tests/preload/t_life_handoff.sh): P pairs of
 * threads; in each, the producer allocates N blocks at site_handed and passes each through a
 * mailbox of 64 slots to its consumer, which frees it, while the producer goes on allocating
 * (every other block, one more at site_temp, freed at once). Every block is freed: none
 * leaked, none unknown. With "shared", the producer frees every other site_handed block itself
 * instead of passing it on, so that one stack's blocks are freed by two threads at the same
 * time. (A mailbox of one slot took a switch of threads per block: minutes on a busy machine,
 * where each yield gives the processor away.)
 * Usage: prog_life_handoff N P [shared] */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "prog_handoff.h"

#define SLOTS 64

struct pair {
	long n;
	int shared;	  /* the producer frees the odd blocks of site_handed */
	void *box[SLOTS]; /* the mailbox: blocks for the consumer, put - took of them */
	unsigned long put, took;
	pthread_t producer, consumer;
};

static void *produce(void *arg)
{
	struct pair *q = arg;
	for (long i = 0; i < q->n; i++) {
		void *p = site_handed(i);
		if (q->shared && (i & 1)) {
			free(p);
			continue;
		}
		while (q->put - __atomic_load_n(&q->took, __ATOMIC_ACQUIRE) == SLOTS)
			sched_yield();
		q->box[q->put % SLOTS] = p;
		__atomic_store_n(&q->put, q->put + 1, __ATOMIC_RELEASE);
		if (i & 1)
			site_temp(i);
	}
	return NULL;
}

static void *consume(void *arg)
{
	struct pair *q = arg;
	for (long i = 0; i < (q->shared ? (q->n + 1) / 2 : q->n); i++) {
		while (__atomic_load_n(&q->put, __ATOMIC_ACQUIRE) == q->took)
			sched_yield();
		void *p = q->box[q->took % SLOTS];
		__atomic_store_n(&q->took, q->took + 1, __ATOMIC_RELEASE);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	int pairs = argc > 2 ? atoi(argv[2]) : 2;
	int shared = argc > 3 && !strcmp(argv[3], "shared");
	struct pair q[16] = {0};
	if (n < 1 || pairs < 1 || pairs > 16)
		return 2;
	for (int i = 0; i < pairs; i++) {
		q[i].n = n;
		q[i].shared = shared;
		if (pthread_create(&q[i].consumer, NULL, consume, &q[i]) ||
		    pthread_create(&q[i].producer, NULL, produce, &q[i]))
			return 1;
	}
	for (int i = 0; i < pairs; i++)
		if (pthread_join(q[i].producer, NULL) || pthread_join(q[i].consumer, NULL))
			return 1;
	return 0;
}
