static inline int sq(int x) { return x * x; }
__attribute__((noinline)) int leaf(int x) { return sq(x) + 1; }
void _start(void) { volatile int r = leaf(3); (void)r; for (;;) ; }
