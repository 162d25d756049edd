package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// hwprof script on hwprof's own recording of its built-in workload: every
// sample printed, frames symbolized from the Go binary, source lines with
// --srcline.
func TestScriptOwnRecording(t *testing.T) {
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "s.data")
	r := hwprof(t, "record", "-g", "-c", "1000000", "-o", out, "--", hwprofBin, workloadArg, "1")
	if r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	n := samplesWritten(t, r.stderr)
	r = hwprof(t, "script", "-i", out, "--srcline")
	if r.code != 0 {
		t.Fatalf("script: exit %d: %s", r.code, r.stderr)
	}
	headers := 0
	for line := range strings.Lines(r.stdout) {
		if strings.Contains(line, " cpu-clock:") {
			headers++
			if !strings.Contains(line, "1000000 cpu-clock:") {
				t.Errorf("sample without its period: %q", line)
			}
		}
	}
	if headers != n {
		t.Errorf("script printed %d samples, the recording has %d", headers, n)
	}
	for _, want := range []string{"main.hotLoop+0x", "main.runWorkload+0x", "main.main+0x", "workload.go:", "(" + hwprofBin + ")"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("script output lacks %q", want)
		}
	}
	if got, ok := perfSamples(t, out); ok && got != n {
		t.Errorf("perf script reads %d samples, hwprof script %d", got, headers)
	}
}

func TestScriptErrors(t *testing.T) {
	r := hwprof(t, "script", "-i", filepath.Join(t.TempDir(), "missing.data"))
	if r.code != 1 || !strings.Contains(r.stderr, "missing.data") {
		t.Errorf("missing file: exit %d, %q", r.code, r.stderr)
	}
	r = hwprof(t, "script", "-F", "nonsense")
	if r.code != 2 || !strings.Contains(r.stderr, "unknown field") {
		t.Errorf("bad -F: exit %d, %q", r.code, r.stderr)
	}
}
