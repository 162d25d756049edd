/* Calls through libc: qsort calls cmp, which burns CPU. A stack taken in
 * cmp goes through libc's sort functions back to main. Built with
 * -O1 -g -fomit-frame-pointer. */
#include <stdlib.h>
#include <time.h>
#include "cpu_ms.h"

volatile unsigned long sink;

__attribute__((noinline)) int cmp(const void *a, const void *b) {
	unsigned long x = sink;
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	int ia = *(const int *)a, ib = *(const int *)b;
	return (ia > ib) - (ia < ib);
}

int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 300;
	int n = 4096;
	int *v = malloc(n * sizeof *v);
	for (int r = 0; r == 0 || cpu_ms() < ms; r++) {
		for (int i = 0; i < n; i++)
			v[i] = (i * 7919 + r) % n;
		qsort(v, n, sizeof *v, cmp);
	}
	free(v);
	return 0;
}
