/* A call-heavy phase (short calls among four functions), then a
   loop-heavy one (one function, no calls), each running for the CPU
   milliseconds given (default 1000). */
#include <stdlib.h>
#include "cpu_ms.h"
__attribute__((noinline)) long fa(long x) { return x * 3 + 1; }
__attribute__((noinline)) long fb(long x) { return x ^ (x >> 3); }
__attribute__((noinline)) long fc(long x) { return fa(x) + fb(x); }
__attribute__((noinline)) long calls(long until) {
	long s = 0;
	for (long i = 0; (i & 0xffff) || cpu_ms() < until; i++) s += fc(i) + fa(s);
	return s;
}
__attribute__((noinline)) long spin(long until) {
	volatile long s = 0;
	for (long i = 0; (i & 0xffff) || cpu_ms() < until; i++) s += i;
	return s;
}
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	long s = calls(ms);
	s += spin(2 * ms);
	return s == 42;
}
