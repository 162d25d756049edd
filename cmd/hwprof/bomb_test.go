package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hwprof/hwprof/internal/zbomb"
)

// TestBombsBoundedMemory runs dump, report and script on recordings whose
// COMPRESSED records expand to gigabytes (they drove these commands to
// 6.6-8.3 GB): each stays under 256 MB, does not crash, names the
// record cut short and exits with status 1 (records were lost).
func TestBombsBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	for _, sh := range zbomb.Shapes(40) {
		path := filepath.Join(dir, sh.Name+".data")
		if err := os.WriteFile(path, sh.Stream, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"dump", "report", "script"} {
			c := exec.Command(hwprofBin, cmd, "-i", path)
			var errb strings.Builder
			c.Stderr = &errb
			err := c.Run()
			if _, ok := err.(*exec.ExitError); err != nil && !ok {
				t.Fatal(err)
			}
			ws := c.ProcessState.Sys().(syscall.WaitStatus)
			rss := c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
			t.Logf("%s %s: exit %d, peak RSS %d MiB", cmd, sh.Name, c.ProcessState.ExitCode(), rss>>10)
			if rss > 256<<10 {
				t.Errorf("%s %s: peak RSS %d MiB, want at most 256 MiB", cmd, sh.Name, rss>>10)
			}
			if ws.Signaled() || strings.Contains(errb.String(), "panic:") {
				t.Errorf("%s %s crashed: %v\n%s", cmd, sh.Name, err, errb.String())
			}
			if sh.Limited && !strings.Contains(errb.String(), "COMPRESSED record at offset 0x10") {
				t.Errorf("%s %s: stderr %q does not name the COMPRESSED record at offset 0x10", cmd, sh.Name, errb.String())
			}
			// Records were lost (the bomb's): exit 1, as for every
			// recording that lost data while it was read.
			if sh.Limited && c.ProcessState.ExitCode() != 1 {
				t.Errorf("%s %s: exit %d, want 1 (records lost)", cmd, sh.Name, c.ProcessState.ExitCode())
			}
		}
	}
}
