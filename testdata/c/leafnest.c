/* main, with its frame pointer, calls outer, which calls inner: both built
 * without frame pointers (the attribute overrides -fno-omit-frame-pointer),
 * as a libc wrapper calling libc's internal routine is. A sample in inner
 * has rbp still at main's frame, so the kernel's frame-pointer chain reads
 * inner, then main's caller: outer and main are both skipped. Runs for the
 * seconds given (default 1). */
#include <stdlib.h>
#include <time.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa, optimize("omit-frame-pointer"))) static long inner(long n) {
	volatile long s = 0;
	for (long i = 0; i < n; i++)
		s += i;
	return s;
}

__attribute__((noipa, optimize("omit-frame-pointer"))) static long outer(long n) {
	return inner(n) * 3 + 1;
}

int main(int argc, char **argv) {
	double secs = argc > 1 ? atof(argv[1]) : 1, t0 = now();
	long sum = 0;
	while (now() - t0 < secs)
		sum += outer(100000);
	return sum == 42;
}
