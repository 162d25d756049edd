/* The CPU time the process has used, in milliseconds (always inlined, so
 * that it is no function of the program's: the exact source does not
 * probe it and profiles do not show it). A program that loops until
 * cpu_ms() reaches a limit given on its command line yields the same
 * number of cpu-clock samples on a fast or slow, idle or loaded machine (a
 * loaded one stretches its wall time instead); a fixed amount of work does
 * not (a fast CPU finishes it in a few samples). */
#ifndef CPU_MS_H
#define CPU_MS_H
#include <time.h>
static inline __attribute__((always_inline)) long cpu_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
#endif
