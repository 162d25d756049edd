// A C++ test program for package symbolize: namespaces, templates,
// virtual calls, an inlined method.
#include <cstdio>
#include <vector>

namespace shapes {

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};

struct Square : Shape {
	double s;
	explicit Square(double s) : s(s) {}
	double area() const override { return s * s; }
};

template <typename T> struct Acc {
	T total{};
	__attribute__((noinline)) void add(T v) { total += v; }
	inline T twice() const { return total * 2; }
};

} // namespace shapes

namespace {
__attribute__((noinline)) double sum(const std::vector<shapes::Shape *> &v) {
	shapes::Acc<double> acc;
	for (auto *s : v)
		acc.add(s->area());
	return acc.twice();
}
} // namespace

int main(int argc, char **) {
	std::vector<shapes::Shape *> v;
	for (int i = 0; i < argc + 3; i++)
		v.push_back(new shapes::Square(i));
	std::printf("%f\n", sum(v));
	return 0;
}
