package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGKILLRecovered: a recording whose hwprof is SIGKILLed 0.2 s, 0.5 s
// and 1 s after it opened its events (before its first checkpoint, at
// 1 s) still gives report and dump its samples, with a warning that it was
// cut short.
func TestSIGKILLRecovered(t *testing.T) {
	needPerfEvents(t)
	samplesRE := regexp.MustCompile(`(?m)^samples:\s+(\d+)`)
	for _, d := range []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, time.Second} {
		out := filepath.Join(t.TempDir(), "kill.data")
		cmd, _ := startHwprof(t, out, 50)
		waitForFile(t, out) // the events are open
		time.Sleep(d)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // hwprof and the program
		cmd.Wait()

		rep := hwprof(t, "report", "-i", out)
		m := samplesRE.FindStringSubmatch(rep.stdout)
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		t.Logf("killed after %v: report exit %d, %d samples", d, rep.code, n)
		if n == 0 {
			t.Errorf("killed after %v: report finds no samples:\n%s\n%s", d, rep.stdout, rep.stderr)
		}
		if !strings.Contains(rep.stderr, "cut short") {
			t.Errorf("killed after %v: report does not say the recording was cut short: %q", d, rep.stderr)
		}
		dump := hwprof(t, "dump", "-i", out)
		if strings.Count(dump.stdout, " SAMPLE ") == 0 || !strings.Contains(dump.stderr, "cut short") {
			t.Errorf("killed after %v: dump prints %d samples, stderr %q; want samples and a cut-short warning", d, strings.Count(dump.stdout, " SAMPLE "), dump.stderr)
		}
	}
}
