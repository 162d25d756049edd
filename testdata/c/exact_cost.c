/* The exact source's cost: each round calls tiny, a function of a few
   instructions, 1000 times and work, a loop of about 20 µs, once; under
   a uprobe on every function the calls cost hundreds of times the work.
   Runs for the CPU milliseconds given (default 2000), then prints its
   rounds. */
#include <stdio.h>
#include <stdlib.h>
#include "cpu_ms.h"
volatile long sink;
__attribute__((noipa)) long tiny(long x) { sink += x; return x + 1; }
__attribute__((noipa)) long work(long x) { long s = 0; for (int i = 0; i < 20000; i++) s += (x + i) % 7; return s; }
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 2000;
	long rounds = 0;
	for (;; rounds++) {
		for (int i = 0; i < 1000; i++) sink += tiny(i);
		sink += work(rounds);
		if ((rounds & 15) == 0 && cpu_ms() >= ms) break;
	}
	printf("rounds %ld\n", rounds);
	return 0;
}
