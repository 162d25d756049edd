package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
)

// leafReport is what the leaf test reads of `hwprof report --format json`.
type leafReport struct {
	Recording struct {
		Leaf *struct{ Checked, Inserted, Unknown uint64 } `json:"leaf"`
	} `json:"recording"`
	Functions []struct{ Name, Object string } `json:"functions"`
	Edges     []struct {
		Caller, Callee string
		Weight         float64
	} `json:"edges"`
}

func leafJSON(t *testing.T, data string) leafReport {
	t.Helper()
	r := hwprof(t, "report", "-i", data, "--format", "json", "--top", "100000")
	if r.code != 0 {
		t.Fatalf("report %s: exit %d\n%s", data, r.code, r.stderr)
	}
	var rep leafReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report %s: %v", data, err)
	}
	return rep
}

type leafPair struct{ caller, callee string }

// exactEdgeShare is the figure of issue 15, item 1: of the weight of the
// adjacent caller → callee pairs of timer's stacks whose callee is a
// function of bin, the share that are edges of the exact profile.
func exactEdgeShare(timer, exact leafReport, bin string) (share, total float64) {
	real := map[leafPair]bool{}
	for _, e := range exact.Edges {
		real[leafPair{e.Caller, e.Callee}] = true
	}
	inBin := map[string]bool{}
	for _, f := range timer.Functions {
		if f.Object == bin {
			inBin[f.Name] = true
		}
	}
	var ok float64
	for _, e := range timer.Edges {
		if !inBin[e.Callee] {
			continue
		}
		total += e.Weight
		if real[leafPair{e.Caller, e.Callee}] {
			ok += e.Weight
		}
	}
	if total == 0 {
		return 0, 0
	}
	return ok / total, total
}

// TestLeafEdgesAreReal records a C and a C++ program built the usual way
// (gcc -O2 -g -fno-omit-frame-pointer: leaf functions get no frame) with
// the exact source and with frame-pointer call graphs two ways, the timer
// source and perf's own flags (-e cpu-clock -g), and holds the share of
// each recording's adjacent caller → callee pairs that the exact source
// saw as calls at ≥ 99% (perf's frame-pointer stacks of the same programs
// give 80-85%, and hwprof's -e did the same before it took the leaf copy
// too: every leaf sample invents an edge). scripts/bench-leaf.sh prints
// the same figure beside perf's.
func TestLeafEdgesAreReal(t *testing.T) {
	t.Parallel() // its own files; it records exact in hwprof processes of its own
	needUprobes(t)
	needPerfEvents(t)
	for _, tc := range []struct{ prog, file string }{{"c/leaf.c", "leaf.c"}, {"cpp/leaf.cc", "leaf.cc"}} {
		t.Run(tc.file, func(t *testing.T) {
			bin := testprog.Build(t, tc.prog, "-O2", "-g", "-fno-omit-frame-pointer")
			exactData := filepath.Join(t.TempDir(), "exact.data")
			if r := hwprof(t, "record", "-q", "--source", "exact", "--max-slowdown", "0", "-o", exactData, "--", bin, "500"); r.code != 0 {
				t.Fatalf("record exact: exit %d\n%s", r.code, r.stderr)
			}
			exact := leafJSON(t, exactData)
			for _, rec := range []struct {
				name string
				args []string // record's options; the program runs for ms of CPU time
				ms   string
			}{
				// about 2,000 samples each: the share has been 100.00%
				// (timer at 1 s, 4,000 samples, gave the same)
				{"timer", []string{"--source", "timer", "-c", "250000"}, "500"},
				{"e-cpu-clock-g", []string{"-e", "cpu-clock", "-g"}, "500"},
			} {
				t.Run(rec.name, func(t *testing.T) {
					data := filepath.Join(t.TempDir(), "fp.data")
					args := append(append([]string{"record", "-q", "-o", data}, rec.args...), "--", bin, rec.ms)
					if r := hwprof(t, args...); r.code != 0 {
						t.Fatalf("record %q: exit %d\n%s", rec.args, r.code, r.stderr)
					}
					checkLeafEdges(t, tc.file, bin, leafJSON(t, data), exact)
				})
			}
		})
	}
}

// checkLeafEdges holds the share of fp's adjacent pairs into bin that are
// exact edges at ≥ 99%, and checks that fp's stacks were repaired.
func checkLeafEdges(t *testing.T, file, bin string, fp, exact leafReport) {
	t.Helper()
	share, total := exactEdgeShare(fp, exact, bin)
	t.Logf("%s: %.2f%% of the pair weight (%.2f of all edge weight) are exact edges", file, 100*share, total)
	if total < 0.5 {
		t.Fatalf("pairs into the program hold only %.2f of the edge weight: the recording is too thin to judge", total)
	}
	if share < 0.99 {
		t.Errorf("%s: %.2f%% of the caller → callee pairs are real calls, want ≥ 99%%", file, 100*share)
	}
	leaf := fp.Recording.Leaf
	if leaf == nil {
		t.Fatalf("the frame-pointer recording has no leaf repair counts: its samples carry no stack copy")
	}
	t.Logf("%s: leaf repair: %+v", file, *leaf)
	if leaf.Inserted*10 < leaf.Checked {
		t.Errorf("%s: only %d of %d stacks repaired: the program no longer has frameless leaves, so the test proves nothing", file, leaf.Inserted, leaf.Checked)
	}
}
