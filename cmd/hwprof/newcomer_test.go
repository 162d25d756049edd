package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// hwprofIn runs hwprof in dir.
func hwprofIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(hwprofBin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run hwprof %q: %v", args, err)
	}
	return r
}

// A reading command run where there is no recording yet, without -i,
// says to record one first, in one line, instead of the error of open.
func TestNoRecordingHere(t *testing.T) {
	dir := t.TempDir()
	want := "hwprof: no hwprof.data here: record one with hwprof record -- CMD, or give -i FILE\n"
	for _, cmd := range []string{"report", "script", "dump", "flamegraph"} {
		r := hwprofIn(t, dir, cmd)
		if r.code != exitError || r.stderr != want {
			t.Errorf("hwprof %s without a recording: exit %d, stderr %q; want exit 1 and %q", cmd, r.code, r.stderr, want)
		}
	}
	// A file named with -i that is missing is the error it is.
	r := hwprofIn(t, dir, "report", "-i", "missing.data")
	if r.code != exitError || !strings.Contains(r.stderr, "missing.data") || strings.Contains(r.stderr, "hwprof record") {
		t.Errorf("report -i missing.data: exit %d, stderr %q", r.code, r.stderr)
	}
}
