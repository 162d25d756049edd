/* scripts/bench-script.sh's program: its own loop and calls into
 * libbench.so (script_lib.c, linked with -lbench), until the seconds of
 * wall time given as its argument (a decimal number; default 1) have
 * passed; prints a checksum. The script runs one copy per CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double lib_mix(double x, int depth);
double lib_sort(int n, unsigned seed);

static double elapsed(struct timespec *t0) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

__attribute__((noinline)) static double own_loop(int n) {
	double s = 0;
	for (int i = 1; i < n; i++)
		s += (double)(i % 7) / i;
	return s;
}

__attribute__((noinline)) static double step(int i) {
	double s = own_loop(20000);
	for (int d = 0; d < 200; d++)
		s += lib_mix(i + d, d % 8);
	return s + lib_sort(500, (unsigned)i);
}

int main(int argc, char **argv) {
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double s = 0;
	for (int i = 0; elapsed(&t0) < seconds; i++)
		s += step(i);
	printf("%g\n", s);
	return 0;
}
