/* Leaf frames for the frame-pointer repair test: main calls rec(20), which
 * recurses down to rec(0), which calls leaf. Built with -O2 -g
 * -fno-omit-frame-pointer: gcc 12 gives leaf no frame, so the kernel's
 * frame-pointer callchain of a sample in leaf skips rec(0). Runs for the
 * seconds given (default 2). */
#include <stdlib.h>
#include <time.h>

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
	double secs = argc > 1 ? atof(argv[1]) : 2;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		rec(20);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
