/* A deep recursion for the DWARF unwinding test: main calls rec(30), which
 * recurses down to rec(0), which calls leaf, which burns CPU. Built with
 * -O1 -g -fomit-frame-pointer, so no frame links the stack: only the CFI
 * can unwind it. */
#include <stdlib.h>
#include <time.h>
#include "cpu_ms.h"

volatile unsigned long sink;

__attribute__((noinline)) void leaf(void) {
	unsigned long x = sink;
	for (int i = 0; i < 200000; i++)
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
	long ms = argc > 1 ? atol(argv[1]) : 300;
	do
		rec(30);
	while (cpu_ms() < ms);
	return 0;
}
