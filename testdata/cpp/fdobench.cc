// fdobench.cc: testdata/c/fdobench.c in C++, for report/autofdo's compiler
// tests of C++ names (mangled, in a namespace, a template, virtual calls).
// Its loop makes one virtual call per shape: 99% of the calls go to a
// cheap override (Square::area), most of the call's time to a rare costly
// one (Polygon::area, 1% of the calls, each about a hundred times the
// work). Each shape also goes through the template classify<long>.
//
// Usage: fdobench [MS]   run for MS milliseconds of CPU (default 1000)
#include <cstdio>
#include <cstdlib>
#include "cpu_ms.h"

namespace geo {

struct Shape {
	long side = 0;
	long pts[8] = {};
	virtual long area() const = 0;
	virtual ~Shape() {}
};

struct Square : Shape {
	long area() const override { return side * side; }
};

struct Polygon : Shape {
	long area() const override {
		long a = 0;
		for (int r = 0; r < 64; r++)
			for (int i = 0; i < 8; i++)
				a += pts[i] * pts[(i + 1) & 7] - pts[(i + r) & 7] + r;
		return a;
	}
};

// classify: a short hot path, a long cold one (sides above a bound, none
// in this workload's input).
template <typename T> T classify(const Shape &s, T acc) {
	if (s.side < 1000000)
		return acc + (s.side & 3);
	char buf[64];
	T h = acc;
	for (int i = 0; i < 8; i++) {
		snprintf(buf, sizeof buf, "%ld:%ld", s.pts[i], long(acc));
		for (char *p = buf; *p; p++)
			h = h * 131 + *p;
	}
	return h;
}

__attribute__((noinline)) long round_shapes(Shape *const *sh, int n) {
	long sum = 0;
	for (int i = 0; i < n; i++) {
		sum += sh[i]->area();
		sum = classify<long>(*sh[i], sum);
	}
	return sum;
}

} // namespace geo

int main(int argc, char **argv) {
	const int n = 1000;
	static geo::Shape *sh[n];
	unsigned seed = 12345;
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		if ((seed >> 8) % 100 == 0)
			sh[i] = new geo::Polygon;
		else
			sh[i] = new geo::Square;
		sh[i]->side = (seed >> 4) % 97;
		for (int j = 0; j < 8; j++)
			sh[i]->pts[j] = (seed >> j) % 31;
	}
	long ms = argc > 1 ? atol(argv[1]) : 1000, sum = 0;
	long end = cpu_ms() + ms;
	while (cpu_ms() < end)
		for (int k = 0; k < 100; k++)
			sum += geo::round_shapes(sh, n);
	printf("checksum %ld\n", sum);
	return 0;
}
