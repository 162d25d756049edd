// Package zbomb builds hostile perf.data inputs for tests of the readers:
// zstd decompression bombs and pipe-mode streams that carry them in
// COMPRESSED records, a few kilobytes that expand to gigabytes
// (zbomb.go); and file-mode files whose headers name overlapping
// sections, sizes just under the reader's caps, counts a tiny file cannot
// hold, or header records inside COMPRESSED records (header.go). It
// writes the zstd format of the bombs by hand (RFC 8878): frame headers
// and RLE blocks, which no encoder emits in these shapes.
package zbomb
