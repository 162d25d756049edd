/* scripts/bench-adaptive.sh's "xz": a real multi-threaded program, xz's
 * compressor (liblzma's multi-threaded encoder, as `xz -T2 -1` runs it:
 * two worker threads compressing blocks of 256 KiB while the main thread
 * feeds them) compressing generated text until the process has used the
 * CPU seconds given as its argument (a decimal number; required); prints
 * the kilobytes compressed (see adaptive_common.h). Build with -llzma
 * (Debian: liblzma-dev). */
#include <lzma.h>
#include "adaptive_common.h"

enum { CHUNK = 64 << 10 };

static void must(lzma_ret rc, const char *what) {
	if (rc != LZMA_OK && rc != LZMA_STREAM_END) {
		fprintf(stderr, "adaptive_xz: %s: error %d\n", what, rc);
		exit(1);
	}
}

/* fill writes words drawn from a small vocabulary, compressible as text is. */
static void fill(unsigned char *p, size_t n, unsigned long *seed) {
	static const char *words[] = {"the ", "profile ", "sample ", "period ", "of ", "a ", "stack ", "frame ",
				      "kernel ", "thread ", "call ", "return ", "and ", "to ", "in ", "\n"};
	size_t i = 0;
	while (i < n) {
		*seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
		const char *w = words[(*seed >> 33) % 16];
		while (*w && i < n) p[i++] = (unsigned char)*w++;
		if ((*seed >> 50) % 7 == 0 && i < n) p[i++] = (unsigned char)('0' + (*seed >> 40) % 10);
	}
}

int main(int argc, char **argv) {
	double limit = atof(argv[1]);
	static unsigned char in[CHUNK], out[1 << 20];
	unsigned long seed = 42;
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_mt mt = {.threads = 2, .block_size = 256 << 10, .preset = 1, .check = LZMA_CHECK_CRC64};
	must(lzma_stream_encoder_mt(&s, &mt), "encoder");
	long kb = 0;
	lzma_action action = LZMA_RUN;
	lzma_ret rc = LZMA_OK;
	while (rc != LZMA_STREAM_END) {
		if (s.avail_in == 0 && action == LZMA_RUN) {
			if (pcpu() >= limit) {
				action = LZMA_FINISH;
			} else {
				fill(in, CHUNK, &seed);
				s.next_in = in;
				s.avail_in = CHUNK;
				kb += CHUNK >> 10;
			}
		}
		s.next_out = out;
		s.avail_out = sizeof out;
		rc = lzma_code(&s, action);
		must(rc, "compress");
	}
	lzma_end(&s);
	done(kb);
	return 0;
}
