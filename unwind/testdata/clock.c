/* Spends its time in the vdso: clock_gettime in a loop, called from
 * spin, called from main. Built with -O1 -g -fomit-frame-pointer. */
#include <stdlib.h>
#include <time.h>

volatile long sink;

__attribute__((noinline)) void spin(int n) {
	struct timespec ts;
	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

int main(int argc, char **argv) {
	spin(argc > 1 ? atoi(argv[1]) : 3000000);
	return 0;
}
