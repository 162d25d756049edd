package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/internal/uprobe"
)

var (
	probingRE   = regexp.MustCompile(`hwprof: exact: probing (\d+) functions `)
	expectedRE  = regexp.MustCompile(`hwprof: exact: expected slowdown (about|over) (\d+)x: \d+ calls probed .*--probe-filter REGEX`)
	limitStopRE = regexp.MustCompile(`hwprof: recording stopped: the exact source's probes slow the program down (about|over) (\d+)x, beyond --max-slowdown 5 .*--probe-filter REGEX.*; the program was sent SIGTERM\n`)
)

// An exact recording says before it starts how many functions it probes,
// and after a short measurement (the program's first 0.5 s of CPU time)
// the slowdown to expect, with --probe-filter to probe fewer. One that is
// slower than --max-slowdown stops there and cleanly: the program gets
// SIGTERM (it never prints its rounds), hwprof says why and exits 0, and
// the file holds the calls recorded until then. exact_cost.c calls a tiny
// function a thousand times per round of 20 µs of work: hundreds of times
// slower under the probes.
func TestExactCostLimit(t *testing.T) {
	needUprobes(t)
	bin := testprog.Build(t, "c/exact_cost.c", "-O2", "-g", "-fno-omit-frame-pointer")
	obj, err := uprobe.Functions(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// No limit: the expected slowdown, and the program runs to its end.
	r := hwprof(t, "record", "--source", "exact", "--max-slowdown", "0", "-o", filepath.Join(dir, "whole.data"), "--", bin, "800")
	m := probingRE.FindStringSubmatch(r.stderr)
	if r.code != 0 || m == nil || m[1] != strconv.Itoa(len(obj.Probes)) {
		t.Fatalf("exit %d; want exit 0 and the %d functions probed named:\n%s", r.code, len(obj.Probes), r.stderr)
	}
	if e := expectedRE.FindStringSubmatch(r.stderr); e == nil || atoi(e[2]) < 10 {
		t.Errorf("no expected slowdown of at least 10x:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "rounds ") || strings.Contains(r.stderr, "recording stopped") {
		t.Errorf("--max-slowdown 0 stopped the program:\n%s\n%s", r.stdout, r.stderr)
	}
	// A low limit: stopped after the measurement, the data kept.
	out := filepath.Join(dir, "cut.data")
	r = hwprof(t, "record", "--source", "exact", "--max-slowdown", "5", "-o", out, "--", bin, "20000")
	if r.code != 0 || !limitStopRE.MatchString(r.stderr) {
		t.Fatalf("--max-slowdown 5: exit %d; want 0 and the stop said:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "rounds ") {
		t.Errorf("the program ran to its end (20 s of CPU) although the recording stopped:\n%s", r.stdout)
	}
	n := samplesWritten(t, r.stderr)
	if got, ok := perfSamples(t, out); ok && got != n {
		t.Errorf("perf script reads %d samples, hwprof says %d", got, n)
	}
	rep := runReportJSON(t, "-i", out)
	if _, calls, ok := rep.edge("main", "tiny"); !ok || calls == 0 || calls > uint64(n) {
		t.Errorf("report of the stopped recording: main -> tiny %d calls (%v), %d samples", calls, ok, n)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
