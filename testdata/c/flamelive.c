/* A few functions (parse, render, a recursion in walk) for the live
   flame-graph test. Runs for the CPU milliseconds given (default 1500). */
#include <stdlib.h>
#include <time.h>
#include "cpu_ms.h"
__attribute__((noinline)) unsigned long leaf(unsigned long x) { for (int j = 0; j < 2000; j++) x = x * 6364136223846793005UL + 1; return x; }
__attribute__((noinline)) unsigned long parse(unsigned long x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) unsigned long render(unsigned long x) { for (int j = 0; j < 3000; j++) x ^= x >> 3; return parse(x) + leaf(x); }
__attribute__((noinline)) unsigned long walk(int n, unsigned long x) { return n == 0 ? render(x) : walk(n - 1, x + n); }
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 1500;
	unsigned long s = 0;
	while (cpu_ms() < ms) s += render(s) + parse(s) + walk(4, s);
	return (int)(s & 1);
}
