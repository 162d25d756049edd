// Package zbomb builds zstd decompression bombs and pipe-mode perf.data
// streams that carry them in COMPRESSED records, for tests of the readers:
// a few kilobytes that expand to gigabytes. It writes the zstd format by
// hand (RFC 8878): frame headers and RLE blocks, which no encoder emits in
// these shapes.
package zbomb
