/* Calls f for the CPU milliseconds given (default 300; so the timer sees
 * it at any CPU speed, and under load), then exits 0. */
#include <stdlib.h>
#include <time.h>
static volatile long x;
__attribute__((noinline)) void f(void) { for (int i = 0; i < 1000; i++) x += i; }
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 300;
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100; i++) f();
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ms * 1000000L);
	return 0;
}
