// Virtual calls (one site, two targets) and a template, for the exact
// source: 10 rounds of n virtual calls each, n given on the command line
// (a count, not a time: exact counts are compared between runs).
#include <cstdlib>
#define F __attribute__((noinline))
volatile long sink;
struct Shape { virtual long area(long) const = 0; virtual ~Shape() {} };
struct Circle : Shape { F long area(long r) const override { return 3 * r * r; } };
struct Square : Shape { F long area(long s) const override { return s * s; } };
template <typename T> F T twice(T x) { sink += x; return 2 * x; }
static F long total(Shape *const *shapes, long n) {
	long sum = 0;
	for (long i = 0; i < n; i++) sum += shapes[i & 1]->area(i);  // one site, two targets
	long r = twice(sum);  // not a tail call: hwprof would see the caller's caller
	sink += r;
	return r;
}
int main(int argc, char **argv) {
	long n = atol(argv[1]);
	Circle c; Square s;
	Shape *shapes[2] = {&c, &s};
	for (int round = 0; round < 10; round++) sink += total(shapes, n) + twice<int>(round);
	return 0;
}
