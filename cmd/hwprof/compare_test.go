package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/testprog"
)

var timerRowRE = regexp.MustCompile(`(?m)^timer\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)`)

// hwprof compare, timer against exact, on this machine, each source's DCG
// as the papers define it (the timer's: the top edge of each sample): a
// program whose functions all do the same self work per call agrees with
// the call counts; the Figure 1 shape shows the timer's error plainly.
// The programs are built as users build them (gcc -O2 with frame
// pointers: leaf functions then have none, and hwprof restores their
// callers from the stack copy).
func TestCompareTimerVsExact(t *testing.T) {
	t.Parallel()   // its own files; it records exact in hwprof processes of its own
	needUprobes(t) // the exact source
	dir := t.TempDir()
	for _, tc := range []struct {
		name, prog, ms string
		check          func(overlap, hot float64) bool
		want           string
	}{
		// 750 ms of CPU time a run: thousands of timer samples, and
		// overlaps far from their bounds (0% and 99.5% at 1500 ms)
		{"fig1", "c/fig1.c", "750", func(o, h float64) bool { return o < 20 && h < 0.5 }, "overlap < 20% and hot-edge coverage < 0.5"},
		{"balanced", "c/balanced.c", "750", func(o, h float64) bool { return o >= 90 && h == 1 }, "overlap >= 90% and hot-edge coverage 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := testprog.Build(t, tc.prog, "-O2", "-g", "-fno-omit-frame-pointer")
			out := filepath.Join(dir, tc.name+"-cmp")
			r := hwprof(t, "compare", "-q", "-o", out, "--", bin, tc.ms)
			if r.code != 0 {
				t.Fatalf("compare: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			t.Logf("%s\n%s", r.stderr, r.stdout)
			for _, f := range []string{"exact.data", "timer.data"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil || !strings.Contains(r.stdout, filepath.Join(out, f)) {
					t.Errorf("recording %s not kept or not named: %v", f, err)
				}
			}
			for _, want := range []string{"exact      the calls counted", "timer      at each sample, the edge into the running function", "timer/adj  every adjacent"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the output does not say which DCG it measures (%q)", want)
				}
			}
			checkComparePage(t, out, r.stdout)
			m := timerRowRE.FindStringSubmatch(r.stdout)
			if m == nil {
				t.Fatalf("no timer row in:\n%s", r.stdout)
			}
			overlap, _ := strconv.ParseFloat(m[1], 64)
			hot, _ := strconv.ParseFloat(m[3], 64)
			if !tc.check(overlap, hot) {
				t.Errorf("%s: timer overlap %.1f%%, hot-edge coverage %.2f; want %s", tc.name, overlap, hot, tc.want)
			}
		})
	}
}

// checkComparePage checks the differential flame graph compare wrote into
// dir, timer against exact: named in stdout, it holds the timer's time
// and, in its place, exact's calls (the two share no weight).
func checkComparePage(t *testing.T, dir, stdout string) {
	t.Helper()
	page := filepath.Join(dir, "timer-vs-exact.html")
	if !strings.Contains(stdout, page) {
		t.Errorf("the output does not name %s:\n%s", page, stdout)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	got := pageWeights(t, string(b))
	var want [2]float64
	for i, src := range []string{"timer", "exact"} {
		p, err := engine.Load(filepath.Join(dir, src+".data"), engine.LoadOptions{})
		if p == nil {
			t.Fatal(err)
		}
		want[i] = float64(p.Map.Totals().Samples)
		if src == "exact" {
			want[i] = float64(p.Map.Totals().Calls)
		}
	}
	if got != want || want[0] == 0 || want[1] == 0 {
		t.Errorf("%s holds weights %v (timer time, exact calls), want %v", page, got, want)
	}
}

func TestCompareUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"compare"}, "give the program"},
		{[]string{"compare", "--sources", "pebs", "--", "true"}, "unknown source"},
		{[]string{"compare", "--sources", "exact", "--", "true"}, "nothing to compare"},
		{[]string{"compare", "--reference", "nope", "--", "true"}, "--reference"},
	} {
		r := hwprof(t, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, exitUsage, tc.msg)
		}
	}
	if _, err := os.Stat("/sys/bus/event_source/devices/cpu"); err != nil {
		r := hwprof(t, "compare", "--sources", "timer,lbr", "-o", t.TempDir(), "--", "true")
		if r.code != exitUsage || !strings.Contains(r.stderr, "source lbr does not work here") {
			t.Errorf("lbr without a PMU: exit %d, stderr %q", r.code, r.stderr)
		}
	}
}

// With --probe-filter the reference measures the calls into the probed
// functions only, and compare measures every source on those: edges into
// other functions are left out of each source's graph, the correlation is
// over the probed functions, and the output says so. balanced.c's three
// functions take the same time per call; probing two of them, the
// timer's edges into those two agree with the exact counts, where its
// whole graph (a third of it into the unprobed one, some into main) would
// not.
func TestCompareProbeFilter(t *testing.T) {
	t.Parallel() // its own files; it records exact in hwprof processes of its own
	needUprobes(t)
	bin := testprog.Build(t, "c/balanced.c", "-O2", "-g", "-fno-omit-frame-pointer")
	out := filepath.Join(t.TempDir(), "cmp")
	r := hwprof(t, "compare", "-q", "--sources", "timer", "--probe-filter", "^f[ab]$", "-o", out, "--", bin, "750")
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("%s\n%s", r.stderr, r.stdout)
	for _, want := range []string{
		"compared on what exact measured: the calls into the 2 functions it probed (--probe-filter ^f[ab]$)",
		"over 2 functions",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output does not say %q", want)
		}
	}
	if strings.Contains(r.stdout, "-> fc ") {
		t.Errorf("an edge into fc, which exact did not probe, is shown")
	}
	m := timerRowRE.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no timer row in:\n%s", r.stdout)
	}
	if overlap, _ := strconv.ParseFloat(m[1], 64); overlap < 85 {
		t.Errorf("timer overlap %.1f%% on the probed functions, want >= 85%% (they take the same time per call)", overlap)
	}
}
