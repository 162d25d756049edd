/* Leaf frames for the frame-pointer repair test: main calls rec(20), which
 * recurses down to rec(0), which calls leaf. Built with -O2 -g
 * -fno-omit-frame-pointer: gcc 12 gives leaf no frame, so the kernel's
 * frame-pointer callchain of a sample in leaf skips rec(0). Runs for the
 * CPU milliseconds given (default 2000). */
#include <stdlib.h>
#include <time.h>
#include "cpu_ms.h"

volatile unsigned long sink;

__attribute__((noinline)) void leaf(void) {
	unsigned long x = sink;
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) int rec(int n) {
	if (n == 0) {
		leaf();
		return 0;
	}
	int r = rec(n - 1);
	sink += r;
	return r + 1;
}

int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 2000;
	do
		rec(20);
	while (cpu_ms() < ms);
	return 0;
}
