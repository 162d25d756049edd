/* A hot leaf under two callers, a recursion, and qsort calling back into
   the program through libc, so that stacks cross objects. Runs for the
   CPU milliseconds given (default 1500). */
#include <stdlib.h>
#include <time.h>
#include "cpu_ms.h"
__attribute__((noinline)) unsigned long leaf(unsigned long x) { for (int j = 0; j < 2000; j++) x = x * 6364136223846793005UL + 1; return x; }
__attribute__((noinline)) unsigned long mid(unsigned long x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) unsigned long top(unsigned long x) { x = mid(x); for (int j = 0; j < 3000; j++) x ^= x >> 3; return x + leaf(x); }
__attribute__((noinline)) unsigned long rec(int n, unsigned long x) { return n == 0 ? mid(x) + mid(x + 1) + mid(x + 2) : rec(n - 1, x + n); }
static int cmp(const void *a, const void *b) { unsigned long x = leaf(*(const unsigned long *)a) & 0xff, y = leaf(*(const unsigned long *)b) & 0xff; return (x > y) - (x < y); }
__attribute__((noinline)) void sorter(unsigned long s) { unsigned long v[8]; for (int i = 0; i < 8; i++) v[i] = s + i * 7919; qsort(v, 8, sizeof v[0], cmp); }
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 1500;
	unsigned long s = 0;
	while (cpu_ms() < ms) { s += top(s) + mid(s) + rec(6, s); sorter(s); }
	return (int)(s & 1);
}
