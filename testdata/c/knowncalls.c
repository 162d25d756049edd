/* Known call counts for the exact source: per round main calls a, b, rec
   and f1 or f2 through a table; a calls c twice, rec(5) recurses 5 deep.
   Runs the number of rounds given (a count, not a time: exact counts are
   compared between runs). noipa keeps gcc -O2 from cloning or inlining. */
#include <stdlib.h>
#define F __attribute__((noipa))
volatile int sink;
F int c(int x) { sink += x; return x + 1; }
F int a(int x) { int r = c(x); r += 2 * c(x + 1); sink += r; return r; }
F int b(int x) { sink += x; return 3 * x; }
F int rec(int n) { if (n == 0) return 0; int r = rec(n - 1); sink += r; return r + n; }
F int f1(int x) { sink += x; return x; }
F int f2(int x) { sink -= x; return x; }
int (*table[2])(int) = {f1, f2};
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	for (int i = 0; i < n; i++) {
		sink += a(i);
		sink += b(i);
		sink += rec(5);
		sink += table[i & 1](i);
	}
	return 0;
}
