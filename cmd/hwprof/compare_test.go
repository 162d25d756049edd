package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/source"
)

// fig1C and balancedC run for the CPU milliseconds their argument gives.
const fig1C = `#include <stdio.h>
#include <stdlib.h>
` + cpuMS + `
__attribute__((noinline)) unsigned long shortA(unsigned long x) { return x >> 3; }
__attribute__((noinline)) unsigned long shortB(unsigned long x) { return x << 1; }
/* Figure 1 of the counter-based sampling paper: long work without calls,
   then two short calls, per iteration. */
long rounds;
__attribute__((noinline)) unsigned long work(long ms) {
	unsigned long s = 0;
	for (int i = 0; i == 0 || cpu_ms() < ms; i++, rounds++) {
		unsigned long x = i;
		for (int j = 0; j < 200000; j++) x = x * 6364136223846793005UL + 1442695040888963407UL;
		s += shortA(x) + shortB(x);
	}
	return s;
}
int main(int argc, char **argv) {
	unsigned long s = work(atol(argv[1]));
	printf("%lu\nrounds %ld\n", s % 1000, rounds);
	return 0;
}
`

const balancedC = `#include <stdio.h>
#include <stdlib.h>
` + cpuMS + `
/* Every call does the same work and the caller almost none: time and
   call counts agree. */
#define BODY(name) __attribute__((noinline)) unsigned long name(unsigned long x) { for (int j = 0; j < 2000; j++) x = x * 6364136223846793005UL + 1442695040888963407UL; return x; }
BODY(fa) BODY(fb) BODY(fc)
int main(int argc, char **argv) {
	unsigned long s = 0;
	long ms = atol(argv[1]);
	for (int i = 0; (i & 63) || cpu_ms() < ms; i++) s += fa(i) + fb(i) + fc(i);
	printf("%lu\n", s % 1000);
	return 0;
}
`

var timerRowRE = regexp.MustCompile(`(?m)^timer\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)`)

// hwprof compare, timer against exact, on this machine, each source's DCG
// as the papers define it (the timer's: the top edge of each sample): a
// program whose functions all do the same self work per call agrees with
// the call counts; the Figure 1 shape shows the timer's error plainly.
// The programs are built as users build them (gcc -O2 with frame
// pointers: leaf functions then have none, and hwprof restores their
// callers from the stack copy).
func TestCompareTimerVsExact(t *testing.T) {
	needUprobes(t) // the exact source
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, src, ms string
		check         func(overlap, hot float64) bool
		want          string
	}{
		{"fig1", fig1C, "1500", func(o, h float64) bool { return o < 20 && h < 0.5 }, "overlap < 20% and hot-edge coverage < 0.5"},
		{"balanced", balancedC, "1500", func(o, h float64) bool { return o >= 90 && h == 1 }, "overlap >= 90% and hot-edge coverage 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(dir, tc.name+".c")
			bin := filepath.Join(dir, tc.name)
			if err := os.WriteFile(src, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", bin, src).CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s", err, out)
			}
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

// Exact is recorded alone (its traps would slow the program under the
// others); every other source shares one run.
func TestGroupRuns(t *testing.T) {
	S := func(ss ...source.Source) []source.Source { return ss }
	for _, c := range []struct {
		in   []source.Source
		want [][]source.Source
	}{
		{S(source.Exact, source.Timer), [][]source.Source{S(source.Exact), S(source.Timer)}},
		{S(source.Exact, source.LBR, source.Timer), [][]source.Source{S(source.Exact), S(source.LBR, source.Timer)}},
		{S(source.LBR, source.Calls, source.Timer), [][]source.Source{S(source.LBR, source.Calls, source.Timer)}},
	} {
		if got := groupRuns(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("groupRuns(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
