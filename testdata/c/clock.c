/* Spends its time in the vdso: clock_gettime in a loop, called from
 * spin, called from main. Built with -O1 -g -fomit-frame-pointer. */
#include <stdlib.h>
#include <time.h>
#include "cpu_ms.h"

volatile long sink;

__attribute__((noinline)) void spin(long ms) {
	struct timespec ts;
	for (long i = 0; (i & 4095) || cpu_ms() < ms; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

int main(int argc, char **argv) {
	spin(argc > 1 ? atol(argv[1]) : 300);
	return 0;
}
