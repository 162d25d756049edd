/* scripts/bench-adaptive.sh's "recurse": a recursion (fib) and a qsort
 * over a comparison function, until the process has used the CPU seconds
 * given as its argument (a decimal number; required); prints the rounds of
 * work done (see adaptive_common.h). */
#include "adaptive_common.h"
__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) int cmp(const void *a, const void *b) {
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}
int main(int argc, char **argv) {
	double limit = atof(argv[1]);
	enum { N = 100000 };
	long *v = malloc(N * sizeof *v), work = 0, acc = 0;
	while (pcpu() < limit) {
		acc += fib(24);
		for (long i = 0; i < N; i++) v[i] = (i * 2654435761L + work) % 1000003;
		qsort(v, N, sizeof *v, cmp);
		acc += v[7];
		work++;
	}
	done(work);
	return acc == 42;
}
