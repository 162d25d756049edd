// Package layout has no code: its tests hold the repository's package
// boundaries, so that a move that undoes issue 29's split fails a test:
// which packages may import what (checked with `go list`), that only
// main packages have init functions, and that cmd/hwprof leaves tracefs
// to internal/uprobe (both checked on the source tree). The tests need
// the go command on PATH, as `go test` does.
package layout
