/* The recording of scripts/bench-report.sh (and of the speed checks that
 * compare with perf): a call tree of its own that calls into shared
 * libraries (libc's qsort, strlen and memcpy, libm's sin), so that a
 * report resolves several objects. Runs until the process has used the
 * milliseconds of CPU given as its argument (default 10000). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_ms.h"
volatile double dsink;
volatile size_t sink;
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
__attribute__((noinline)) void sortit(int *v, int n) { qsort(v, n, sizeof *v, cmp); }
__attribute__((noinline)) void strs(char *s, int n) { for (int i = 0; i < n; i++) sink += strlen(s + (i & 7)); }
__attribute__((noinline)) void copy(char *d, char *s, int n) { for (int i = 0; i < n; i++) memcpy(d, s, 200 + (i & 63)); }
__attribute__((noinline)) void maths(int n) { for (int i = 0; i < n; i++) dsink += sin(i * 0.001); }
__attribute__((noinline)) void leaf(int n) { for (int i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void mid(int d, int n) { if (d == 0) { leaf(n); maths(n / 8); } else { mid(d - 1, n); leaf(n / 4); } }
__attribute__((noinline)) void tree(int *v, char *s, char *d) {
	for (int i = 0; i < 256; i++) v[i] = rand();
	sortit(v, 256); strs(s, 2000); copy(d, s, 500); mid(3, 3000); mid(6, 1000);
}
int main(int argc, char **argv) {
	long limit = argc > 1 ? atol(argv[1]) : 10000;
	int v[256]; char s[512], d[512];
	memset(s, 'x', sizeof s - 1); s[sizeof s - 1] = 0;
	while (cpu_ms() < limit) tree(v, s, d);
	return 0;
}
