/* scripts/bench-exact.sh's cost per probe hit: calls leaf (a tiny
 * function, never inlined) the number of times given as its argument
 * (required) and prints the loop's own wall time in nanoseconds. A count,
 * not a run time: the script divides the time a probe on leaf adds by the
 * number of calls. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
volatile long sink;
__attribute__((noipa)) long leaf(long x) { sink += x; return x + 1; }
int main(int argc, char **argv) {
	long n = atol(argv[1]);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) sink += leaf(i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\n", (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec));
	return 0;
}
