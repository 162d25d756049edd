// Package layout has no code: its tests hold the repository's package
// boundaries (which packages may import what), checked with `go list`,
// so that a move that undoes issue 29's split fails a test. The tests
// need the go command on PATH, as `go test` does.
package layout
