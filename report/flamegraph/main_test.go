package flamegraph_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/record/release"
)

// init keeps the main goroutine on the main thread into TestMain, for the
// launcher trampoline (see launch.Main).
func init() { runtime.LockOSThread() }

// The test binary doubles as the launcher trampoline and the releaser of
// perf events, as hwprof does: real_test.go records programs.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case launch.Arg:
			os.Exit(launch.Main(os.Args[2:]))
		case release.Arg:
			os.Exit(release.Main(os.Args[2:]))
		}
	}
	runtime.UnlockOSThread()
	os.Exit(m.Run())
}
