package pprof

import (
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// goCommand returns the go command, or skips the test when this machine
// has none (the go tool is the independent reader these tests hold the
// files against).
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no go command on this machine (not in PATH, not at %s)", p)
	}
	return p
}

// writeFile writes p with o into a temporary file and returns its path.
func writeFile(t *testing.T, p *Profile, o Options) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profile.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, p, o); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func runPprof(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(goCommand(t), append([]string{"tool", "pprof"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// topRow is one row of `go tool pprof -top`.
type topRow struct {
	flat, cum       int64
	flatPct, cumPct float64
}

var topLine = regexp.MustCompile(`^\s*(\d+)(?:ns)?\s+([\d.e+-]+)%\s+[\d.e+-]+%\s+(\d+)(?:ns)?\s+([\d.e+-]+)%\s+(.+)$`)

func parseTop(t *testing.T, out string) map[string]topRow {
	t.Helper()
	rows := map[string]topRow{}
	for _, line := range strings.Split(out, "\n") {
		m := topLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var r topRow
		r.flat, _ = strconv.ParseInt(m[1], 10, 64)
		r.flatPct, _ = strconv.ParseFloat(m[2], 64)
		r.cum, _ = strconv.ParseInt(m[3], 10, 64)
		r.cumPct, _ = strconv.ParseFloat(m[4], 64)
		rows[strings.TrimSuffix(m[5], " (inline)")] = r
	}
	if len(rows) == 0 {
		t.Fatalf("no rows in pprof -top output:\n%s", out)
	}
	return rows
}

// wantTop computes flat and cumulative weights per function from the
// input model: flat by the leaf frame, cumulative once per sample for each
// function on its stack; for calls, each edge is a sample of the callee on
// the caller's call site.
func wantTop(p *Profile, w Weight) map[string]topRow {
	rows := map[string]topRow{}
	add := func(fs []frame, v int64) {
		if v == 0 || len(fs) == 0 {
			return
		}
		r := rows[fs[0].fn]
		r.flat += v
		rows[fs[0].fn] = r
		seen := map[string]bool{}
		for _, f := range fs {
			if !seen[f.fn] {
				seen[f.fn] = true
				r := rows[f.fn]
				r.cum += v
				rows[f.fn] = r
			}
		}
	}
	if w == Time {
		for _, s := range p.Samples {
			add(p.frames(s.Stack), s.TimeNS)
		}
	} else {
		for _, e := range p.Edges {
			fs := []frame{{p.Functions[e.Callee].Name, 0}}
			if e.Site >= 0 {
				fs = append(fs, p.frames([]int{e.Site})...)
			} else {
				fs = append(fs, frame{p.Functions[e.Caller].Name, 0})
			}
			add(fs, e.Calls)
		}
	}
	var total int64
	for _, r := range rows {
		total += r.flat
	}
	for name, r := range rows {
		r.flatPct = 100 * float64(r.flat) / float64(total)
		r.cumPct = 100 * float64(r.cum) / float64(total)
		rows[name] = r
	}
	return rows
}

// samePct says whether a percentage pprof printed (two decimals from 1%
// on, two significant digits below) is the share want.
func samePct(got, want float64) bool {
	if want >= 1 {
		return math.Abs(got-want) <= 0.0051
	}
	return math.Abs(got-want) <= 0.051*want
}

// TestPprofTop: go tool pprof -top shows the functions with the flat and
// cumulative weights and shares the input model gives, under time and
// under calls.
func TestPprofTop(t *testing.T) {
	p := synthetic()
	path := writeFile(t, p, Options{})
	for _, tc := range []struct {
		index string
		w     Weight
	}{{"cpu", Time}, {"calls", Calls}} {
		out := runPprof(t, "-top", "-nodefraction=0", "-unit=ns", "-sample_index="+tc.index, path)
		got, want := parseTop(t, out), wantTop(p, tc.w)
		// pprof lists functions that only have zero weight in this
		// sample type (callers seen only in the other kind of sample).
		maps.DeleteFunc(got, func(_ string, r topRow) bool { return r.flat == 0 && r.cum == 0 })
		if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
			t.Errorf("%s: functions %v, want %v\n%s", tc.index, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)), out)
			continue
		}
		for name, w := range want {
			g := got[name]
			if g.flat != w.flat || g.cum != w.cum || !samePct(g.flatPct, w.flatPct) || !samePct(g.cumPct, w.cumPct) {
				t.Errorf("%s: %s: flat %d (%.4g%%) cum %d (%.4g%%), want %d (%.4g%%) %d (%.4g%%)",
					tc.index, name, g.flat, g.flatPct, g.cum, g.cumPct, w.flat, w.flatPct, w.cum, w.cumPct)
			}
		}
	}
}

// parseTraces returns the stacks of `go tool pprof -traces` as
// "value: leaf; caller; ..." lines, sorted.
func parseTraces(t *testing.T, out string) []string {
	t.Helper()
	var stacks []string
	var cur []string
	var value string
	flush := func() {
		if cur != nil {
			stacks = append(stacks, value+": "+strings.Join(cur, "; "))
		}
		cur = nil
	}
	inTraces := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "-----------+"):
			flush()
			inTraces = true
		case !inTraces || strings.TrimSpace(line) == "" || strings.Contains(line, ":  "):
			// header, blank, or a label line
		case cur == nil:
			f := strings.Fields(line)
			value = strings.TrimSuffix(f[0], "ns")
			cur = []string{strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f[0]))}
		default:
			cur = append(cur, strings.TrimSpace(line))
		}
	}
	flush()
	slices.Sort(stacks)
	return stacks
}

// wantTraces is what -traces should print for p's stacks (time) or edges
// (calls): frames leaf first, an inlined frame marked "(inline)".
func wantTraces(p *Profile, w Weight) []string {
	names := func(stack []int) []string {
		var out []string
		for _, l := range stack {
			lines := p.Locations[l].Lines
			for i, ln := range lines {
				name := p.Functions[ln.Function].Name
				if i < len(lines)-1 {
					name += " (inline)"
				}
				out = append(out, name)
			}
		}
		return out
	}
	var stacks []string
	if w == Time {
		for _, s := range p.Samples {
			stacks = append(stacks, fmt.Sprintf("%d: %s", s.TimeNS, strings.Join(names(s.Stack), "; ")))
		}
	} else {
		for _, e := range p.Edges {
			frames := []string{p.Functions[e.Callee].Name}
			if e.Site >= 0 {
				frames = append(frames, names([]int{e.Site})...)
			} else {
				frames = append(frames, p.Functions[e.Caller].Name)
			}
			stacks = append(stacks, fmt.Sprintf("%d: %s", e.Calls, strings.Join(frames, "; ")))
		}
	}
	slices.Sort(stacks)
	return stacks
}

// TestPprofTraces: go tool pprof -traces prints the sampled stacks with
// their time, and each measured edge as callee over caller with its count;
// the kind label separates them.
func TestPprofTraces(t *testing.T) {
	p := synthetic()
	path := writeFile(t, p, Options{})
	for _, tc := range []struct {
		index, kind string
		w           Weight
	}{{"cpu", KindStack, Time}, {"calls", KindEdge, Calls}} {
		out := runPprof(t, "-traces", "-unit=ns", "-sample_index="+tc.index, "-tagfocus="+KindLabel+"="+tc.kind, path)
		if got, want := parseTraces(t, out), wantTraces(p, tc.w); !slices.Equal(got, want) {
			t.Errorf("%s traces:\n got %q\nwant %q\n%s", tc.index, got, want, out)
		}
	}
}

// TestPprofComments: the recording facts reach pprof's -comments.
func TestPprofComments(t *testing.T) {
	p := synthetic()
	out := runPprof(t, "-comments", writeFile(t, p, Options{}))
	for _, c := range p.Comments {
		if !strings.Contains(out, c) {
			t.Errorf("comment %q missing from go tool pprof -comments:\n%s", c, out)
		}
	}
}
