/* Runs for the CPU milliseconds given (at least one round) and prints the
   rounds. */
#include <stdio.h>
#include <stdlib.h>
#include "cpu_ms.h"
__attribute__((noinline)) unsigned long shortA(unsigned long x) { return x >> 3; }
__attribute__((noinline)) unsigned long shortB(unsigned long x) { return x << 1; }
/* Figure 1 of the counter-based sampling paper: long work without calls,
   then two short calls, per iteration. */
long rounds;
__attribute__((noinline)) unsigned long work(long ms) {
	unsigned long s = 0;
	for (int i = 0; i == 0 || cpu_ms() < ms; i++, rounds++) {
		unsigned long x = i;
		for (int j = 0; j < 200000; j++) x = x * 6364136223846793005UL + 1442695040888963407UL;
		s += shortA(x) + shortB(x);
	}
	return s;
}
int main(int argc, char **argv) {
	unsigned long s = work(atol(argv[1]));
	printf("%lu\nrounds %ld\n", s % 1000, rounds);
	return 0;
}
