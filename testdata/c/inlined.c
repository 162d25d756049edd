/* Hot code inlined into its caller: outer runs the inlined mix three
   times per round (3/4 of its work) and a loop of its own once (1/4).
   Built with -O2 -g, the profile of the sampled instructions has mix as
   an inlined frame of outer. Runs rounds (at least one) for the CPU
   milliseconds given (default 1000) and prints how many. */
#include <stdio.h>
#include <stdlib.h>
#include "cpu_ms.h"
volatile unsigned long sink;
static inline __attribute__((always_inline)) void mix(int n) {
	for (int i = 0; i < n; i++)
		sink += i * 7;
}
__attribute__((noinline)) void outer(int n) {
	for (int k = 0; k < 3; k++)
		mix(n);
	for (int i = 0; i < n; i++)
		sink ^= i;
}
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 1000, r = 0;
	do { outer(100000); r++; } while (cpu_ms() < ms);
	printf("rounds %ld\n", r);
	return 0;
}
