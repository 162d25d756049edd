// Virtual calls through a base class, a recursive template-free visitor,
// small leaf methods called from several callers; runs for the CPU
// milliseconds given (default 2000).
#include <cstdlib>
#include <memory>
#include <vector>
#include "../c/cpu_ms.h"
struct Shape {
	virtual ~Shape() {}
	virtual long area(long x) const = 0;
};
struct Square : Shape {
	long area(long x) const override { long s = 0; for (int i = 0; i < 30; i++) s += (x + i) * (x - i); return s; }
};
struct Tri : Shape {
	long area(long x) const override { long s = x; for (int i = 0; i < 45; i++) s = s * 7 + (s >> 5) + i; return s; }
};
__attribute__((noinline)) long scale(long x) { for (int i = 0; i < 20; i++) x = (x * 13) ^ (x >> 2); return x; }
__attribute__((noinline)) long mix(const Shape &s, long x) { return s.area(x) + scale(x); }
__attribute__((noinline)) long walk(const std::vector<std::unique_ptr<Shape>> &v, int depth, long x) {
	if (depth == 0) return v[(x / 3) % v.size()]->area(x);
	return walk(v, depth - 1, x + 1) + scale(x);
}
__attribute__((noinline)) long step(const std::vector<std::unique_ptr<Shape>> &v, long i) {
	if (i % 3 == 0) return mix(*v[(i / 3) % v.size()], i);
	if (i % 3 == 1) return walk(v, 4, i);
	return scale(i) + v[(i / 3 + 1) % v.size()]->area(i);
}
int main(int argc, char **argv) {
	long ms = argc > 1 ? std::atol(argv[1]) : 2000;
	std::vector<std::unique_ptr<Shape>> v;
	v.emplace_back(new Square);
	v.emplace_back(new Tri);
	v.emplace_back(new Square);
	long s = 0;
	for (long i = 0;; i++) {
		s += step(v, i);
		if ((i & 1023) == 0 && cpu_ms() >= ms) break;
	}
	return s == 42;
}
