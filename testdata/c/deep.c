/* Recursion 300 deep, then work in the innermost call until the time is
   up: every stack is deeper than the kernel walks. Runs for the CPU
   milliseconds given (default 1000). */
#include <stdio.h>
#include <stdlib.h>
#include "cpu_ms.h"
__attribute__((noinline)) unsigned long spin(long ms) {
	unsigned long x = 1;
	while (cpu_ms() < ms)
		for (int j = 0; j < 100000; j++) x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}
__attribute__((noinline)) unsigned long down(int n, long ms) { return n == 0 ? spin(ms) : down(n - 1, ms) + 1; }
int main(int argc, char **argv) { printf("%lu\n", down(300, argc > 1 ? atol(argv[1]) : 1000) % 10); return 0; }
