package launch

import (
	"os"
	"runtime"
	"testing"
)

// init keeps the main goroutine on the main thread into TestMain, as
// Main needs.
func init() { runtime.LockOSThread() }

// The test binary doubles as the trampoline, as hwprof does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Main(os.Args[2:]))
	}
	runtime.UnlockOSThread()
	os.Exit(m.Run())
}
