/* What the programs of scripts/bench-adaptive.sh share: pcpu(), the
 * process's CPU time in seconds, and done(), which prints the work done
 * and the CPU time used ("work N cpu S" on stderr, read by the script). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double pcpu(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}
static void done(long work) { fprintf(stderr, "work %ld cpu %.6f\n", work, pcpu()); }
