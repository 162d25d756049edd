/* scripts/bench-merge.sh's recordings: a small tree of functions (mid
 * recursing down to leaf) until the process has used the seconds of CPU
 * given as its argument (a decimal number, by clock(); default 0.2). */
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void leaf(int n) { for (int i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void mid(int d, int n) { if (d == 0) leaf(n); else { mid(d - 1, n); leaf(n / 4); } }
int main(int argc, char **argv) {
	double limit = argc > 1 ? atof(argv[1]) : 0.2;
	while ((double)clock() / CLOCKS_PER_SEC < limit) { mid(3, 3000); mid(6, 1000); }
	return 0;
}
