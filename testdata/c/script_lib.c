/* scripts/bench-script.sh's shared library (libbench.so, built with
 * -fPIC -shared, linked with -lm): a recursion into libm (lib_mix) and a
 * qsort, memset and strlen (lib_sort), called by script_main.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double lib_mix(double x, int depth) {
	if (depth > 0)
		return lib_mix(x * 1.0001, depth - 1) + 1.0;
	return sin(x) * exp(-x * 1e-9) + sqrt(fabs(x)) + log1p(fabs(x));
}

double lib_sort(int n, unsigned seed) {
	double *v = malloc(n * sizeof *v);
	char *buf = malloc(n * 8);
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (double)(seed >> 8);
	}
	qsort(v, n, sizeof *v, cmp);
	memset(buf, 'x', n * 8 - 1);
	buf[n * 8 - 1] = 0;
	double r = v[n / 2] + strlen(buf);
	free(v);
	free(buf);
	return r;
}
