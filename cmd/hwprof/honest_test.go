package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
)

// An exact recording reads as calls: functions by calls and their share
// of all calls, and no edge invented from _start's entry, where the top
// of the stack holds argc, not a return address.
func TestExactReportShowsCalls(t *testing.T) {
	t.Parallel()   // its own files; it records exact in hwprof processes of its own
	needUprobes(t) // the exact source
	bin := testprog.Build(t, "c/balanced.c", "-O2", "-g", "-fno-omit-frame-pointer")
	data := filepath.Join(t.TempDir(), "exact.data")
	if r := hwprof(t, "record", "-q", "--source", "exact", "-o", data, "--", bin, "300"); r.code != 0 { // 300 ms of CPU
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	r := hwprof(t, "report", "-i", data)
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	out := r.stdout + r.stderr
	t.Log(out)
	if !strings.Contains(out, "functions (calls into each, and their share of all ") || strings.Contains(out, "shares of 0 sampled weight") {
		t.Errorf("the functions are not shown by calls")
	}
	for _, f := range []string{"fa", "fb", "fc"} {
		m := regexp.MustCompile(`(?m)^\s*(\d+)\s+([\d.]+)%\s+` + f + `\s`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Errorf("no calls line for %s", f)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n == 0 {
			t.Errorf("%s: 0 calls", f)
		}
		if s, _ := strconv.ParseFloat(m[2], 64); s < 30 || s > 34 {
			t.Errorf("%s: %.2f%% of the calls, want a third", f, s)
		}
	}
	if strings.Contains(r.stdout, "→ _start") || strings.Contains(r.stdout, "[unknown] →") {
		t.Errorf("an edge invented from a return address that is none")
	}
	if !strings.Contains(out, "probe hits whose return address follows no call instruction") {
		t.Errorf("the dropped hit at _start's entry is not counted")
	}
}

var cutRE = regexp.MustCompile(`(\d+) samples \(([\d.]+)% of the sampled weight\) have stacks cut at the kernel's limit of (\d+) frames`)

// A recursion deeper than the kernel walks: its stacks are cut at
// perf_event_max_stack (or at --max-stack), counted and warned about,
// not taken for broken ones.
var brokenRE = regexp.MustCompile(`samples \(([\d.]+)% of the sampled weight\) have stacks that cannot be real`)

func TestDeepRecursionCut(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	// -O0: gcc keeps the recursion a recursion
	bin := testprog.Build(t, "c/deep.c", "-O0", "-fno-omit-frame-pointer")
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_max_stack")
	if err != nil {
		t.Skipf("no perf_event_max_stack sysctl: %v", err)
	}
	sysMax, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if sysMax <= 64 || sysMax >= 300 {
		t.Skipf("kernel.perf_event_max_stack is %d here: the test needs 64 < it < 300", sysMax)
	}
	for _, tc := range []struct {
		args  []string
		limit int
	}{{nil, sysMax}, {[]string{"--max-stack", "64"}, 64}} {
		data := filepath.Join(t.TempDir(), "deep.data")
		args := append(append([]string{"record", "-q", "-o", data}, tc.args...), "--", bin, "1000")
		if r := hwprof(t, args...); r.code != 0 {
			t.Fatalf("record %q: exit %d\n%s", tc.args, r.code, r.stderr)
		}
		r := hwprof(t, "report", "-i", data)
		if r.code != 0 {
			t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
		}
		out := r.stdout + r.stderr
		m := cutRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%q: no warning of cut stacks:\n%s", tc.args, out)
		}
		share, _ := strconv.ParseFloat(m[2], 64)
		limit, _ := strconv.Atoi(m[3])
		if limit != tc.limit || share < 80 {
			t.Errorf("%q: %s samples, %.2f%% cut at %d frames; want most of them cut at %d", tc.args, m[1], share, limit, tc.limit)
		}
		// A real recursion is not broken. A sample or two taken where no
		// stack can be walked (the loader at start, an exit path) may be,
		// and are counted as such: at most 1% of the weight.
		if m := brokenRE.FindStringSubmatch(out); m != nil {
			if share, _ := strconv.ParseFloat(m[1], 64); share >= 1 {
				t.Errorf("%q: a real recursion taken for broken stacks (%s%%):\n%s", tc.args, m[1], out)
			}
		}
		if !strings.Contains(out, "down → down") {
			t.Errorf("%q: no recursive edge:\n%s", tc.args, out)
		}
	}
	if r := hwprof(t, "record", "-q", "--max-stack", strconv.Itoa(sysMax+1), "-o", filepath.Join(t.TempDir(), "x.data"), "--", "true"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "sysctl -w kernel.perf_event_max_stack=") {
		t.Errorf("--max-stack above the sysctl: exit %d, %s", r.code, r.stderr)
	}
}
