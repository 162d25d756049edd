// Package launch starts a program stopped just before its execve, so that
// perf events can be opened on its pid with enable_on_exec and count
// nothing but the program itself.
//
// Go cannot fork without exec, so the child first executes a launcher that
// waits for the go-ahead: a 181-byte static executable (launcher.go,
// testdata/launcher.asm) written to a sealed memfd once per process. It
// marks the error pipe close-on-exec, says it is ready, blocks reading a
// pipe, and when the parent writes the go-ahead byte it calls execve(2)
// with the user's command. Events opened on the launcher's pid with
// inherit and enable_on_exec start counting at that execve. Should execve
// fail, the launcher writes errno to a second pipe (closed on exec) and
// exits with 127 (not found) or 126 (not executable), as shells do.
//
// Where a memfd cannot be executed, the launcher is a trampoline instead:
// hwprof re-executes its own binary (/proc/self/exe) with Arg as its
// first argument, and its main hands the rest to Main, which does the
// same on the main thread. It costs the program 3 to 4 ms more CPU time
// before its first instruction (the Go runtime and the packages'
// initialisation, charged to the program's CPU clock), which the launcher
// avoids.
//
// A binary whose main dispatches Arg to Main (hwprof, and the test
// binaries of the packages whose tests start programs) can act as a
// trampoline; Arg keeps it from triggering by accident.
//
// Start (or StartWith, to choose the child's standard streams) starts the
// launcher; Child.Pid is what the events are opened on, Child.Go lets it
// exec, Child.Wait returns its status as a shell would (128+N for signal N,
// ExitCode), and Child.Abort kills a launcher that is not to run.
//
// What it does not do: it opens no perf events and does not record
// (internal/record does both). It starts no goroutines.
//
// The caller provides a binary whose main, before anything else, calls
// Main when its first argument is Arg, with the main goroutine locked to
// the main thread since initialisation (an init function calling
// runtime.LockOSThread), and waits for every Child it started.
package launch
