/* scripts/bench-adaptive.sh's "threads": four pthreads workers with
 * different call shapes (short calls, a recursion, a loop, qsort), each
 * for a quarter of the CPU seconds given as its argument (a decimal
 * number; required) of its own CPU time; prints the work done (see
 * adaptive_common.h). Build with -pthread. */
#include <pthread.h>
#include "adaptive_common.h"
static double limit;
__attribute__((noinline)) long leaf(long x) { return x * 3 + 1; }
__attribute__((noinline)) long mid(long x) { return leaf(x) ^ leaf(x >> 1); }
__attribute__((noinline)) long calls(void) { long s = 0; for (long i = 0; i < 100000; i++) s += mid(i); return s; }
__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) long spin(void) { volatile long s = 0; for (long i = 0; i < 2000000; i++) s += i; return s; }
__attribute__((noinline)) int cmp(const void *a, const void *b) {
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}
__attribute__((noinline)) long sortsome(void) {
	enum { N = 20000 };
	static __thread long v[N];
	for (long i = 0; i < N; i++) v[i] = (i * 2654435761L) % 1000003;
	qsort(v, N, sizeof *v, cmp);
	return v[7];
}
static long work[4];
static double rate[4]; /* each worker's units per second of its CPU time */
static double tcpu(void) {
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}
/* Each worker runs for a quarter of the CPU time: run by the process's
 * CPU time, the workers' shares were the scheduler's choice, which
 * differs from run to run, and the overlap with a reference recorded in
 * another run measured the scheduler more than the sampling. */
static void *worker(void *arg) {
	long k = (long)arg, acc = 0;
	while (tcpu() < limit / 4) {
		switch (k) {
		case 0: acc += calls(); break;
		case 1: acc += fib(22); break;
		case 2: acc += spin(); break;
		default: acc += sortsome();
		}
		work[k]++;
	}
	rate[k] = work[k] / tcpu();
	return (void *)acc;
}
/* The workers' units differ in cost and the scheduler decides how much
 * CPU each gets, so the work reported is the program's CPU time times
 * the workers' mean rate, in units of a millisecond's work. */
int main(int argc, char **argv) {
	limit = atof(argv[1]);
	pthread_t t[4];
	for (long k = 0; k < 4; k++) pthread_create(&t[k], 0, worker, (void *)k);
	double mean = 0;
	for (int k = 0; k < 4; k++) { pthread_join(t[k], 0); mean += rate[k] / 4; }
	done((long)(pcpu() * mean * 1000));
	return 0;
}
