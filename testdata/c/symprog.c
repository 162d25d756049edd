/* A test program for package symbolize: plain calls, a static inline
   function in a hot loop, recursion and a function pointer. */
#include <stdio.h>
#include <stdlib.h>

static inline int mix(int a, int b) { return (a * 31) ^ (b + 7); }

static inline int mix2(int a, int b) { return mix(a, b) + mix(b, a); }

__attribute__((noinline)) int hot(int n) {
	int acc = 0;
	for (int i = 0; i < n; i++)
		acc += mix2(acc, i);
	return acc;
}

__attribute__((noinline)) int depth(int n) {
	if (n == 0)
		return hot(100);
	return depth(n - 1) + 1;
}

static int (*fp)(int) = depth;

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 10;
	printf("%d\n", fp(n));
	return 0;
}
