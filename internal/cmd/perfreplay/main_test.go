package main

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// fileFacts reads path: its samples' times in delivery order (0 when a
// sample has none), the count of records of each other type, and its
// header's build-ids and branch-stack flag.
type fileFacts struct {
	times   []uint64
	others  map[perf.RecordType]int64
	buildID int
	branch  bool
}

func read(t *testing.T, path string) fileFacts {
	t.Helper()
	r, err := perfdata.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ff := fileFacts{others: map[perf.RecordType]int64{}}
	for r.Next() {
		rec := r.Record()
		switch typ := rec.Type(); {
		case typ == perf.RecordSample:
			var tm uint64
			if _, lay, err := r.Format().Layout(rec.Raw); err == nil && lay.Time >= 0 {
				tm = binary.LittleEndian.Uint64(rec.Raw[lay.Time:])
			}
			ff.times = append(ff.times, tm)
		case typ < perf.RecordHeaderAttr && typ != perf.RecordFinishedRound:
			ff.others[typ]++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	ff.buildID, ff.branch = len(r.Features().BuildIDs), r.Features().BranchStack
	return ff
}

func TestReplay(t *testing.T) {
	in := filepath.Join(fixtures.Dir(t), "perf_data_converter", "perf.data.branch-3.4")
	out := filepath.Join(t.TempDir(), "x3")
	const n = 3
	st, err := replay(in, out, n)
	if err != nil {
		t.Fatal(err)
	}
	a, b := read(t, in), read(t, out)
	if st.samples != int64(len(a.times)) || len(b.times) != n*len(a.times) {
		t.Fatalf("samples: in %d (replay says %d), out %d, want %d x %d", len(a.times), st.samples, len(b.times), n, len(a.times))
	}
	// every pass is the input's samples, in its order, shifted in time
	// by k spans: the passes follow each other
	lo, hi := a.times[0], a.times[0]
	for _, tm := range a.times {
		lo, hi = min(lo, tm), max(hi, tm)
	}
	span := hi - lo + 1
	for k := 0; k < n; k++ {
		for i, tm := range a.times {
			if got, want := b.times[k*len(a.times)+i], tm+uint64(k)*span; got != want {
				t.Fatalf("pass %d sample %d: time %d, want %d", k, i, got, want)
			}
		}
	}
	for typ, c := range a.others {
		want := c
		if typ == perf.RecordExit {
			want = 0
		}
		if b.others[typ] != want {
			t.Errorf("%v records: %d, want %d", typ, b.others[typ], want)
		}
	}
	if b.buildID != a.buildID || b.branch != a.branch || !b.branch {
		t.Errorf("header: %d build-ids, branch stacks %v; want %d, %v (true)", b.buildID, b.branch, a.buildID, a.branch)
	}

	// perf reads it, and finds the input's shares
	perfBin := testenv.Tool(t, "perf")
	shares := func(path string) string {
		cmd := exec.Command(perfBin, "report", "-i", path, "--stdio", "--no-children", "--no-branch-stack", "-g", "none", "--sort", "sym", "-q")
		outb, err := cmd.Output()
		if err != nil {
			t.Fatalf("perf report -i %s: %v", path, err)
		}
		lines := strings.Split(strings.TrimSpace(string(outb)), "\n")
		return strings.Join(lines[:min(5, len(lines))], "\n")
	}
	if x, y := shares(in), shares(out); x != y || x == "" {
		t.Errorf("perf report's top symbols differ:\n%s\nreplayed:\n%s", x, y)
	}
}

func TestReplayRefuses(t *testing.T) {
	in := filepath.Join(fixtures.Dir(t), "perf_data_converter", "perf.data.branch-3.4")
	dir := t.TempDir()
	if _, err := replay(in, dir, 2); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("replay onto a directory: %v, want a refusal", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := replay(empty, filepath.Join(dir, "out"), 2); err == nil {
		t.Error("replay of an empty file: no error")
	}
}
