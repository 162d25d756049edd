/* A test program for package symbolize: time spent in libc (qsort, rand,
   memset, memcpy, strlen, snprintf, strtol) for perf to sample, for the
   CPU milliseconds given (default 1000). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "cpu_ms.h"
static int cmp(const void *a, const void *b) { return *(const int*)a - *(const int*)b; }
int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	static int v[100000]; static char buf[1<<16], buf2[1<<16];
	long s = 0;
	do {
		for (int i = 0; i < 100000; i++) v[i] = rand();
		qsort(v, 100000, sizeof v[0], cmp);
		for (int i = 0; i < 200; i++) { memset(buf, 'a' + i % 20, sizeof buf - 1); memcpy(buf2, buf, sizeof buf); s += strlen(buf2); }
		char tmp[64]; for (int i = 0; i < 2000; i++) { snprintf(tmp, sizeof tmp, "%d %f", i, i * 1.5); s += strtol(tmp, 0, 10); }
	} while (cpu_ms() < ms);
	printf("%ld\n", s);
	return 0;
}
