/* A known shape: main calls a, which calls b ten times (the hot path: b
   does 10/11 of the work), and main calls c once per round (the cold
   path: 1/11 of the work). Runs rounds (at least one) for the CPU
   milliseconds given (default 1000) and prints how many. */
#include <stdio.h>
#include <stdlib.h>
#include "cpu_ms.h"
volatile unsigned long sink;
__attribute__((noinline)) void b(int n) { for (int i = 0; i < n; i++) sink += i * 7; }
__attribute__((noinline)) void a(int n) { for (int i = 0; i < 10; i++) b(n); }
__attribute__((noinline)) void c(int n) { for (int i = 0; i < n; i++) sink += i * 7; }
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 1000, r = 0;
	do { a(100000); c(100000); r++; } while (cpu_ms() < ms);
	printf("rounds %ld\n", r);
	return 0;
}
