package unwind

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// hwprofBuild is the hwprof binary the live tests record with, built once
// per test process (a build links the whole command: about two seconds of
// CPU) into a directory TestMain removes.
var hwprofBuild struct {
	once     sync.Once
	dir, bin string
	err      error
}

// hwprofBinary returns the path of hwprof built from this module,
// building it on the first call.
func hwprofBinary(t testing.TB) string {
	t.Helper()
	hwprofBuild.once.Do(func() {
		hwprofBuild.dir, hwprofBuild.err = os.MkdirTemp("", "unwind-test-hwprof")
		if hwprofBuild.err != nil {
			return
		}
		bin := filepath.Join(hwprofBuild.dir, "hwprof")
		if b, err := exec.Command("go", "build", "-o", bin, "github.com/hwprof/hwprof/cmd/hwprof").CombinedOutput(); err != nil {
			hwprofBuild.err = fmt.Errorf("go build hwprof: %v\n%s", err, b)
			return
		}
		hwprofBuild.bin = bin
	})
	if hwprofBuild.err != nil {
		t.Fatal(hwprofBuild.err)
	}
	return hwprofBuild.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if hwprofBuild.dir != "" {
		os.RemoveAll(hwprofBuild.dir)
	}
	os.Exit(code)
}
