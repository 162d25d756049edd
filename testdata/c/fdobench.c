/* fdobench: the workload of sample-based FDO (scripts/bench-fdo.sh and
 * report/autofdo's compiler tests). Its loop makes one indirect call per
 * shape: 99% of the calls go to a cheap function (square), most of the
 * call's time to a rare costly one (polygon, 1% of the calls, each about
 * a hundred times the work). A profile that counts calls names square as
 * the call's target; one of time names polygon. Each shape also goes
 * through classify, whose hot path is short and whose cold path is long.
 *
 * Usage: fdobench [MS]          run for MS milliseconds of CPU (default 1000)
 *        fdobench rounds=N      run N rounds of 1000 shapes, then print the
 *                               checksum and the work loop's CPU time
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cpu_ms.h"

#define NSHAPES 1000

struct shape;
typedef long (*area_fn)(const struct shape *);

struct shape {
	area_fn area;
	long side;
	long pts[8];
};

long square(const struct shape *s) { return s->side * s->side; }

long polygon(const struct shape *s) {
	long a = 0;
	for (int r = 0; r < 64; r++)
		for (int i = 0; i < 8; i++)
			a += s->pts[i] * s->pts[(i + 1) & 7] - s->pts[(i + r) & 7] + r;
	return a;
}

/* classify: a short hot path, a long cold one (shapes of odd side above a
 * bound, none in this workload's input). */
long classify(const struct shape *s, long acc) {
	if (s->side < 1000000)
		return acc + (s->side & 3);
	char buf[64];
	long h = acc;
	for (int i = 0; i < 8; i++) {
		snprintf(buf, sizeof buf, "%ld:%ld", s->pts[i], acc);
		for (char *p = buf; *p; p++)
			h = h * 131 + *p;
	}
	return h;
}

__attribute__((noinline)) long round_shapes(const struct shape *sh, int n) {
	long sum = 0;
	for (int i = 0; i < n; i++) {
		sum += sh[i].area(&sh[i]);
		sum = classify(&sh[i], sum);
	}
	return sum;
}

static double thread_cpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	static struct shape sh[NSHAPES];
	unsigned seed = 12345;
	for (int i = 0; i < NSHAPES; i++) {
		seed = seed * 1103515245 + 12345;
		sh[i].area = (seed >> 8) % 100 == 0 ? polygon : square;
		sh[i].side = (seed >> 4) % 97;
		for (int j = 0; j < 8; j++)
			sh[i].pts[j] = (seed >> j) % 31;
	}
	long rounds = -1, ms = 1000;
	if (argc > 1 && strncmp(argv[1], "rounds=", 7) == 0)
		rounds = atol(argv[1] + 7);
	else if (argc > 1)
		ms = atol(argv[1]);
	long sum = 0;
	double t0 = thread_cpu();
	if (rounds >= 0) {
		for (long r = 0; r < rounds; r++)
			sum += round_shapes(sh, NSHAPES);
		printf("checksum %ld cpu %.6f\n", sum, thread_cpu() - t0);
		return 0;
	}
	long end = cpu_ms() + ms;
	while (cpu_ms() < end)
		for (int k = 0; k < 100; k++)
			sum += round_shapes(sh, NSHAPES);
	printf("checksum %ld\n", sum);
	return 0;
}
