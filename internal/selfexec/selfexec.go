// Package selfexec runs the helper processes hwprof starts of its own
// binary: the launcher trampoline that execs the recorded program
// (internal/launch) and the releaser of perf events (internal/record/
// release). hwprof's main, and the test binaries that record as hwprof
// does, call Run first, with the main goroutine locked to the main thread
// since init (the trampoline must exec there: see launch.Main).
//
// It starts no goroutines and reads nothing but argv.
package selfexec

import (
	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/record/release"
)

// Run runs the helper process argv[1] names and returns its exit status;
// ok is false for any other command line (the caller goes on).
func Run(argv []string) (code int, ok bool) {
	if len(argv) < 2 {
		return 0, false
	}
	switch argv[1] {
	case launch.Arg:
		return launch.Main(argv[2:]), true
	case release.Arg:
		return release.Main(argv[2:]), true
	}
	return 0, false
}
