/* Two threads pass a byte back and forth over two pipes for the seconds
 * given (default 1): every pass is a switch out of one thread and a switch
 * in of the other. The second argument (default 0) is a number of loop
 * iterations each thread computes between passes, which sets how often
 * they switch (none: as fast as the machine switches, some 100,000 to
 * 400,000 times a second). Prints "work ROUNDTRIPS seconds S" at the end
 * (the wall time it ran: a tool that slows switches lowers
 * ROUNDTRIPS / S). Built with -O1 -g -fno-omit-frame-pointer -pthread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static volatile int stop;
static long spins;

/* compute does the work between two passes. */
__attribute__((noinline)) static void compute(void) {
	for (volatile long i = 0; i < spins; i++) {
	}
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static int pass(int in, int out) {
	char c;
	compute();
	if (read(in, &c, 1) != 1)
		return 0;
	return write(out, &c, 1) == 1;
}

static void *echo(void *arg) {
	while (pass(ab[0], ba[1])) {
	}
	return arg;
}

int main(int argc, char **argv) {
	double secs = argc > 1 ? atof(argv[1]) : 1;
	spins = argc > 2 ? atol(argv[2]) : 0;
	if (pipe(ab) || pipe(ba))
		return 1;
	pthread_t th;
	pthread_create(&th, 0, echo, 0);
	double t0 = now(), t;
	long n = 0;
	char c = 'x';
	if (write(ab[1], &c, 1) != 1)
		return 1;
	while ((t = now()) - t0 < secs) {
		for (int i = 0; i < 100; i++) {
			pass(ba[0], ab[1]);
			n++;
		}
	}
	close(ab[1]);
	pthread_join(th, 0);
	printf("work %ld seconds %.3f\n", n, t - t0);
	return 0;
}
