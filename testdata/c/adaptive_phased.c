/* scripts/bench-adaptive.sh's "phased": a call-heavy phase (short calls),
 * then a loop without calls, each for half of the CPU seconds given as its
 * argument (a decimal number, such as 0.5; required); prints the rounds of
 * work done (see adaptive_common.h). */
#include "adaptive_common.h"
__attribute__((noinline)) long fa(long x) { return x * 3 + 1; }
__attribute__((noinline)) long fb(long x) { return x ^ (x >> 3); }
__attribute__((noinline)) long fc(long x) { return fa(x) + fb(x); }
__attribute__((noinline)) long calls(long n) {
	long s = 0;
	for (long i = 0; i < n; i++) s += fc(i) + fa(s);
	return s;
}
__attribute__((noinline)) long spin(long n) {
	volatile long s = 0;
	for (long i = 0; i < n; i++) s += i;
	return s;
}
int main(int argc, char **argv) {
	double limit = atof(argv[1]);
	long work = 0, acc = 0;
	while (pcpu() < limit / 2) { acc += calls(100000); work++; }
	while (pcpu() < limit) { acc += spin(1000000); work++; }
	done(work);
	return acc == 42;
}
