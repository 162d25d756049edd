/* Spends its time in the vdso: clock_gettime in a loop, called from
 * spin, called from main. Built with -O1 -g -fomit-frame-pointer. */
#include <stdlib.h>
#include <time.h>

volatile long sink;

/* The CPU time the process has used, in milliseconds: the program runs
 * for the time its argument gives, on a fast or slow, idle or loaded
 * machine. */
static long cpu_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
