// Package layout has no code: its tests hold the repository's package
// boundaries, so that a move that undoes issue 29's split fails a test.
// docs/architecture.md lists every package by layer and states which
// layer may import which; the tests hold the list against `go list ./...`
// (a package missing from it fails with the line to add) and the rules
// against every package's imports, and check that the analysis side
// imports nothing of the recorder, directly or not; only the commands and
// internal/perfflags import flag, and perf nothing that does. Besides,
// only main packages have init functions, cmd/hwprof leaves tracefs to
// internal/uprobe, goroutines start in internal/pipeline, symbolize and
// perf/perfdata alone, no file is over 900 lines nor the loader
// (internal/engine/load.go) over 600, and only package addrspace declares
// the address types Addr and ObjAddr (checked on the source tree). The
// tests need the go command on PATH, as `go test` does.
package layout
