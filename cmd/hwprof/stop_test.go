package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A recording ended on purpose (--duration, Ctrl-C, SIGTERM) says what
// stopped it and is a success: exit 0, the data kept. In command mode the
// program gets SIGTERM, as perf stat --timeout does; processes attached
// to with -p go on.
func TestStoppedOnPurpose(t *testing.T) {
	t.Parallel() // its own programs and files
	needPerfEvents(t)
	dir := t.TempDir()
	spin := []string{"sh", "-c", "while :; do :; done"}
	check := func(what string, code int, stderr, out string, want ...string) {
		t.Helper()
		if code != 0 {
			t.Errorf("%s: exit %d, want 0\n%s", what, code, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", what, w, stderr)
			}
		}
		n := samplesWritten(t, stderr)
		if got, ok := perfSamples(t, out); ok && got != n {
			t.Errorf("%s: perf script reads %d samples, hwprof says %d", what, got, n)
		}
	}
	out := filepath.Join(dir, "d.data")
	r := hwprof(t, append([]string{"record", "-o", out, "--duration", "700ms", "--"}, spin...)...)
	check("--duration, command mode", r.code, r.stderr, out, "hwprof: recording stopped after --duration 700ms; the program was sent SIGTERM")
	// The -p cases come last, the process they attach to started for
	// them: beside the command-mode cases it would only spin.
	pid := 0
	for _, tc := range []struct {
		sig  syscall.Signal
		args []string
		want string
	}{
		{syscall.SIGINT, spin, "hwprof: interrupted (SIGINT): recording stopped; the program was sent SIGTERM"},
		{syscall.SIGTERM, spin, "hwprof: terminated (SIGTERM): recording stopped; the program was sent SIGTERM"},
		{syscall.SIGINT, nil, "hwprof: interrupted (SIGINT): recording stopped; the processes go on"},
	} {
		out := filepath.Join(dir, "s.data")
		args := []string{"record", "-o", out}
		what := tc.sig.String()
		if tc.args == nil {
			if pid == 0 {
				pid, _ = busyLoop(t, "hw-stop")
			}
			args = append(args, "-p", strconv.Itoa(pid))
			what += ", -p"
		} else {
			args = append(append(args, "--"), tc.args...)
			what += ", command mode"
		}
		cmd := exec.Command(hwprofBin, args...)
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForFile(t, out)
		time.Sleep(500 * time.Millisecond)
		cmd.Process.Signal(tc.sig)
		code := 0
		if err := cmd.Wait(); err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		check(what, code, errb.String(), out, tc.want)
	}
	out = filepath.Join(dir, "p.data")
	r = hwprof(t, "record", "-o", out, "-p", strconv.Itoa(pid), "--duration", "700ms")
	check("--duration, -p", r.code, r.stderr, out, "hwprof: recording stopped after --duration 700ms; the processes go on")
}
