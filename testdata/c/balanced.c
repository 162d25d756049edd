/* Runs for the CPU milliseconds given. */
#include <stdio.h>
#include <stdlib.h>
#include "cpu_ms.h"
/* Every call does the same work and the caller almost none: time and
   call counts agree. */
#define BODY(name) __attribute__((noinline)) unsigned long name(unsigned long x) { for (int j = 0; j < 2000; j++) x = x * 6364136223846793005UL + 1442695040888963407UL; return x; }
BODY(fa) BODY(fb) BODY(fc)
int main(int argc, char **argv) {
	unsigned long s = 0;
	long ms = atol(argv[1]);
	for (int i = 0; (i & 63) || cpu_ms() < ms; i++) s += fa(i) + fb(i) + fc(i);
	printf("%lu\n", s % 1000);
	return 0;
}
