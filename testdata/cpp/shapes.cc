/* Methods of a class in a namespace, a template and a virtual call, so
   that names are demangled and functions have start lines from DWARF.
   Runs rounds for the CPU milliseconds given (default 1000) and prints
   how many. */
#include <cstdio>
#include <cstdlib>
#include "../c/cpu_ms.h"
namespace shapes {
volatile unsigned long sink;
struct Shape { virtual ~Shape() {} virtual void area(int n) = 0; };
struct Square : Shape { __attribute__((noinline)) void area(int n) override { for (int i = 0; i < n; i++) sink += i * 3; } };
template <typename T> __attribute__((noinline)) void spin(T n) { for (T i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void work(Shape *s) { for (int i = 0; i < 4; i++) s->area(100000); spin<long>(100000); }
}
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 1000, r = 0;
	shapes::Square sq;
	do { shapes::work(&sq); r++; } while (cpu_ms() < ms);
	std::printf("rounds %ld\n", r);
	return 0;
}
