// Package summary says what a recording did, for the user: the lines
// hwprof record prints after it (Write: the samples per event, what was
// written, the loss, hwprof's own CPU time, the events' attach and
// release, the adaptive period's history) and what ended it (StopNote).
//
// It reads only what internal/record returns (Options, Stats) and writes
// to the io.Writer it is given; it records nothing and starts no
// goroutines.
package summary
