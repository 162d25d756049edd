/* A tight loop in main and no calls (but the clock's, every 65536
 * iterations): every sample has the same top frame. Runs for the CPU
 * milliseconds given (default 2500). */
#include <stdlib.h>
#include <time.h>
#include "cpu_ms.h"

int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 2500;
	volatile unsigned long s = 0;
	for (unsigned long i = 0; (i & 0xffff) || cpu_ms() < ms; i++)
		s += i;
	return 0;
}
