package flamegraph_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/hwprof/hwprof/internal/selfexec"
	"github.com/hwprof/hwprof/report/flamegraph"
)

// init keeps the main goroutine on the main thread into TestMain, for the
// launcher trampoline (see launch.Main).
func init() { runtime.LockOSThread() }

// The test binary doubles as the launcher trampoline and the releaser of
// perf events, as hwprof does: real_test.go records programs.
func TestMain(m *testing.M) {
	if code, ok := selfexec.Run(os.Args); ok {
		os.Exit(code)
	}
	runtime.UnlockOSThread()
	code := m.Run()
	flamegraph.CloseBrowser()
	os.Exit(code)
}
