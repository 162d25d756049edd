/* A function without call-frame information between two that have it, as
 * the C runtime's __do_global_dtors_aux and hand-written assembly are:
 * main calls nofde, which keeps a frame pointer but has no FDE in
 * .eh_frame, and calls burn, which runs for the CPU time given. A DWARF
 * unwinder finds burn's caller with burn's CFI and must then follow
 * nofde's frame pointer to reach main, as perf's does. Built with
 * -O1 -g -fomit-frame-pointer. */
#include <stdlib.h>
#include "cpu_ms.h"

volatile unsigned long sink;

__attribute__((noinline)) void burn(long ms) {
	unsigned long x = sink;
	while (cpu_ms() < ms)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

/* nofde(fn, arg) calls fn(arg) with a frame-pointer frame and no .cfi_*
 * directives, so the assembler emits no FDE for it. */
void nofde(void (*fn)(long), long arg);
__asm__(".text\n"
	".globl nofde\n"
	".type nofde, @function\n"
	"nofde:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	call *%rax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size nofde, .-nofde\n");

int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 300;
	nofde(burn, ms);
	return 0;
}
