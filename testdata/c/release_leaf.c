/* scripts/bench-release.sh's one-probe exact recording: leaf (a tiny
 * function, never inlined) called 1000 times, no argument. The script
 * times the whole recording (attaching, the run, detaching) right after a
 * large one and on a quiet machine; the program's work is meant to be
 * negligible next to that, so it is a fixed, small count, not a run time. */
volatile long sink;
__attribute__((noipa)) long leaf(long x) { sink += x; return x + 1; }
int main(void) { for (long i = 0; i < 1000; i++) sink += leaf(i); return 0; }
