// Package dump prints a perf.data recording as text, for reading a file
// by eye and for golden tests: Records prints one line per record (as
// `perf report -D` does, but one line each, fields by name, a sample's
// callchain, branch stack and read values indented under it); Stats prints
// the header facts, the events and a count of records by type.
//
// It owns the text format only: the caller opens the recording
// (perfdata.Open or perfdata.OpenFile), chooses the order
// (Reader.SetFileOrder), buffers the writer, and prints the Reader's
// warnings. It does not symbolize, unwind or resolve mappings: addresses
// are printed as recorded. It starts no goroutines and reads no file but
// through the Reader it is given.
package dump
