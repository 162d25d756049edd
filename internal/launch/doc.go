// Package launch starts a program stopped just before its execve, so that
// perf events can be opened on its pid with enable_on_exec and count
// nothing but the program itself.
//
// Go cannot fork without exec, so hwprof re-executes its own binary
// (/proc/self/exe) with a marker argument. That trampoline process runs the
// init function below on its main thread, says it is ready, blocks reading a
// pipe, and when
// the parent writes the go-ahead byte it calls execve(2) with the user's
// command. Events opened on the trampoline's pid with inherit and
// enable_on_exec start counting at that execve. Should execve fail, the
// trampoline writes the error to a second pipe (closed on exec) and exits
// with 127 (not found) or 126 (not executable), as shells do.
//
// Any binary that imports this package (hwprof, and test binaries of
// packages that import it) can act as a trampoline; the marker keeps it
// from triggering by accident.
//
// Start (or StartWith, to choose the child's standard streams) starts the
// trampoline; Child.Pid is what the events are opened on, Child.Go lets it
// exec, Child.Wait returns its status as a shell would (128+N for signal N,
// ExitCode), and Child.Abort kills a trampoline that is not to run.
//
// What it does not do: it opens no perf events and does not record
// (internal/record does both). It starts no goroutines.
//
// The caller provides a binary that imports this package (its init runs
// before main in the trampoline, which must not do anything else), and
// waits for every Child it started.
package launch
