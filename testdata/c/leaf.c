/* Leaves called from several callers, an indirect call through a table, a
   recursion: run for the CPU milliseconds given on the command line
   (default 2000). */
#include <stdlib.h>
#include "cpu_ms.h"
typedef long (*op_fn)(long);
__attribute__((noinline)) long leaf_a(long x) { for (int i = 0; i < 40; i++) x = x * 31 + i; return x; }
__attribute__((noinline)) long leaf_b(long x) { for (int i = 0; i < 25; i++) x ^= x >> 3 ^ i; return x; }
__attribute__((noinline)) long leaf_c(long x) { long s = 0; for (int i = 0; i < 60; i++) s += (x + i) % 7; return s; }
static op_fn ops[3] = {leaf_a, leaf_b, leaf_c};
__attribute__((noinline)) long mid_one(long x) { return leaf_a(x) + leaf_b(x + 1); }
__attribute__((noinline)) long mid_two(long x) { return leaf_b(x) - leaf_c(x); }
__attribute__((noinline)) long via_table(long x) { return ops[x % 3](x) + ops[(x + 1) % 3](x); }
__attribute__((noinline)) long rec(int n, long x) { return n == 0 ? leaf_c(x) : rec(n - 1, x + n) + leaf_a(x); }
__attribute__((noinline)) long top(long i) {
	switch (i & 3) {
	case 0: return mid_one(i);
	case 1: return mid_two(i);
	case 2: return via_table(i);
	}
	return rec(5, i);
}
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 2000;
	long s = 0;
	for (long i = 0;; i++) {
		s += top(i);
		if ((i & 1023) == 0 && cpu_ms() >= ms) break;
	}
	return s == 42;
}
