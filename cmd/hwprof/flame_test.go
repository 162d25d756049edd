package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/report/flamegraph"
)

var pageDataRE = regexp.MustCompile(`(?s)<script type="application/json" id="hwprof-data">(.*?)</script>`)

// pageTime is the sum of the time weights embedded in a flame-graph page.
func pageTime(t *testing.T, page string) float64 {
	t.Helper()
	return pageWeights(t, page)[0]
}

// pageWeights returns the sums of the time weights embedded in a
// flame-graph page: the profile's, then the base's of a differential page.
func pageWeights(t *testing.T, page string) [2]float64 {
	t.Helper()
	m := pageDataRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no data in the page (%d bytes)", len(page))
	}
	var d struct {
		TimeUnit float64   `json:"timeUnit"`
		Time     []float64 `json:"time"`
		BTime    []float64 `json:"btime"`
	}
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("page data: %v", err)
	}
	var sum [2]float64
	for i, vs := range [][]float64{d.Time, d.BTime} {
		for _, v := range vs {
			sum[i] += v * d.TimeUnit
		}
	}
	return sum
}

// A live timer recording of the built-in workload and a fixture: the
// flame-graph page's stacks add up to the profile's sampled weight, the
// folded stacks parse back to the same total, -o rotates a file it
// replaces to .old and writes a device as it is.
func TestReportFlamegraph(t *testing.T) {
	t.Parallel()
	t.Run("fixture", func(t *testing.T) {
		checkFlameOutputs(t, filepath.Join(fixtures.Dir(t), "perf_data_converter", "perf.data.callgraph-3.8"))
	})
	t.Run("live", func(t *testing.T) {
		needPerfEvents(t)
		live, _ := workloadRecording(t)
		checkFlameOutputs(t, live)
	})
}

// checkFlameOutputs writes the flame graph and folded stacks of the
// recording in and checks their weights against its profile.
func checkFlameOutputs(t *testing.T, in string) {
	t.Helper()
	if _, err := os.Stat(in); err != nil {
		t.Fatalf("input: %v", err)
	}
	p, err := engine.Load(in, engine.LoadOptions{})
	if p == nil {
		t.Fatalf("load: %v", err)
	}
	want := float64(p.Map.Totals().Samples)
	if want == 0 {
		t.Fatalf("%s has no sampled weight", in)
	}
	html := filepath.Join(t.TempDir(), "flame.html")
	for range 2 { // the second run rotates the first page to .old
		if r := hwprof(t, "report", "--format", "flamegraph", "-i", in, "-o", html); r.code != 0 {
			t.Fatalf("report --format flamegraph: exit %d\n%s", r.code, r.stderr)
		}
	}
	for _, f := range []string{html, html + ".old"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := pageTime(t, string(b)); got != want {
			t.Errorf("%s: the page's stacks weigh %v, the profile %v", filepath.Base(f), got, want)
		}
	}
	// the alias, to a device: written as it is
	if r := hwprof(t, "flamegraph", "-i", in, "-o", os.DevNull); r.code != 0 {
		t.Fatalf("flamegraph -o %s: exit %d\n%s", os.DevNull, r.code, r.stderr)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, fi, err)
	}
	r := hwprof(t, "report", "--format", "folded", "-i", in)
	if r.code != 0 {
		t.Fatalf("report --format folded: exit %d\n%s", r.code, r.stderr)
	}
	stacks, err := flamegraph.ParseFolded(strings.NewReader(r.stdout), flamegraph.WeightTime)
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, s := range stacks {
		got += s.Time
	}
	if got != want {
		t.Errorf("folded stacks weigh %v, the profile %v", got, want)
	}
}

func TestReportFormatUsage(t *testing.T) {
	for _, args := range [][]string{
		{"report", "--format", "svg"},
		{"report", "--format", "folded", "--weight", "cycles"},
	} {
		if r := hwprof(t, args...); r.code != exitUsage || !strings.Contains(r.stderr, "unknown") {
			t.Errorf("hwprof %q: exit %d, %s", args, r.code, r.stderr)
		}
	}
	// a directory is refused before the recording is read
	if r := hwprof(t, "report", "--format", "folded", "-i", "does-not-matter.data", "-o", t.TempDir()); r.code == 0 {
		t.Errorf("report -o DIR: exit 0")
	}
}

// TestReportWeightNeedsItsMeasure: --weight calls on a timer recording,
// which has no call counts, is an error that says why and what counts
// calls, in every format (the flame graph and folded stacks used to draw
// time instead, the text and JSON reports to ignore it), and leaves an
// existing -o file alone; on an exact recording --weight calls draws the
// calls and an explicit --weight time, which it has none of, is refused.
func TestReportWeightNeedsItsMeasure(t *testing.T) {
	t.Parallel() // its own files; it records exact in hwprof processes of its own
	needPerfEvents(t)
	bin := testprog.Build(t, "c/balanced.c", "-O2", "-g", "-fno-omit-frame-pointer")
	dir := t.TempDir()
	timer := filepath.Join(dir, "timer.data")
	if r := hwprof(t, "record", "-q", "-g", "-o", timer, "--", bin, "200"); r.code != 0 { // 200 ms of CPU
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	out := filepath.Join(dir, "out")
	for _, format := range []string{"flamegraph", "folded", "text", "json"} {
		if err := os.WriteFile(out, []byte("before"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := hwprof(t, "report", "-i", timer, "--format", format, "--weight", "calls", "-o", out)
		if r.code != exitError || !strings.Contains(r.stderr, "--weight calls") || !strings.Contains(r.stderr, "no call counts") ||
			!strings.Contains(r.stderr, "lbr, calls and exact") {
			t.Errorf("report --format %s --weight calls of a timer recording: exit %d, stderr %q; want exit %d and why", format, r.code, r.stderr, exitError)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != "before" {
			t.Errorf("--format %s: the refused report wrote %s (%v)", format, out, err)
		}
		if _, err := os.Stat(out + ".old"); err == nil {
			t.Errorf("--format %s: the refused report rotated %s", format, out)
		}
	}
	if r := hwprof(t, "report", "-i", timer, "--format", "folded", "--weight", "time"); r.code != 0 || r.stdout == "" {
		t.Errorf("--weight time of a timer recording: exit %d\n%s", r.code, r.stderr)
	}
	// diff too: two timer recordings compared by calls.
	for _, format := range []string{"text", "json", "flamegraph"} {
		r := hwprof(t, "diff", "--format", format, "--weight", "calls", timer, timer)
		if r.code != exitError || !strings.Contains(r.stderr, "--weight calls: "+timer) || !strings.Contains(r.stderr, "no call counts") {
			t.Errorf("diff --format %s --weight calls of timer recordings: exit %d, stderr %q; want exit %d and why", format, r.code, r.stderr, exitError)
		}
	}

	needUprobes(t)
	exact := filepath.Join(dir, "exact.data")
	if r := hwprof(t, "record", "-q", "--source", "exact", "-o", exact, "--", bin, "100"); r.code != 0 {
		t.Fatalf("record --source exact: exit %d\n%s", r.code, r.stderr)
	}
	r := hwprof(t, "report", "-i", exact, "--format", "folded", "--weight", "calls")
	stacks, err := flamegraph.ParseFolded(strings.NewReader(r.stdout), flamegraph.WeightCalls)
	if r.code != 0 || err != nil || len(stacks) == 0 {
		t.Errorf("--weight calls of an exact recording: exit %d, %d stacks (%v)\n%s", r.code, len(stacks), err, r.stderr)
	}
	r = hwprof(t, "report", "-i", exact, "--format", "folded", "--weight", "time")
	if r.code != exitError || !strings.Contains(r.stderr, "--weight time") || !strings.Contains(r.stderr, "no sampled time") {
		t.Errorf("--weight time of an exact recording: exit %d, stderr %q; want exit %d and why", r.code, r.stderr, exitError)
	}
}
