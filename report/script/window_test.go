package script

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// print prints the recording at path with the engine (objects looked for
// under symfs, and test.binary of the autofdo fixtures for the LBR one)
// and returns the output and the notes.
func print(t *testing.T, path, symfs string, objects map[string]string, o Options) (string, []string) {
	t.Helper()
	r, err := perfdata.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	eng := engine.New(r, engine.Options{SymFS: symfs, Objects: objects})
	defer eng.Close()
	var out bytes.Buffer
	p := New(r, eng.ScriptView(), o, &out)
	if err := eng.Visit(p.Add); err != nil {
		t.Logf("%s: reading stopped: %v", path, err)
	}
	notes, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), notes
}

// Printing a window of samples at a time changes nothing: real recordings
// (the LBR one with its program, callchains with and without branch
// stacks) print the same, notes included, with windows of five samples as
// with the default windows, in the default layout with the branch stack,
// with source lines, and in perf's field layout.
func TestWindowsPrintAlike(t *testing.T) {
	fx := fixtures.Dir(t)
	symfs := t.TempDir() // no file of this machine is read for recordings made elsewhere
	lbrObjects := map[string]string{"/export/hda3/tmp/test.binary": filepath.Join(fx, "autofdo", "test.binary")}
	recordings := []struct {
		file    string
		objects map[string]string
	}{
		{"autofdo/test.lbr", lbrObjects},
		{"perf_data_converter/perf.data.callgraph_and_branch-3.8", nil},
		{"autofdo/propeller_sample_1.perfdata1", nil},
		{"perf_data_converter/perf.data.forkexit-3.4", nil},
		{"perf_data_converter/multi-event-single-process.perf.data", nil},
	}
	layouts := []string{"brstack,brstacksym", "srcline", "comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso,brstack"}
	for _, rec := range recordings {
		for _, fields := range layouts {
			t.Run(fmt.Sprintf("%s/%s", filepath.Base(rec.file), fields), func(t *testing.T) {
				o, err := ParseFields(fields)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(fx, rec.file)
				want, wantNotes := print(t, path, symfs, rec.objects, o)
				defer func(s, f int) { windowSamples, windowFrames = s, f }(windowSamples, windowFrames)
				windowSamples, windowFrames = 5, 64
				got, gotNotes := print(t, path, symfs, rec.objects, o)
				if want == "" || bytes.Count([]byte(want), []byte("\n")) < 100 {
					t.Fatalf("%d bytes printed with the default windows: too little to compare", len(want))
				}
				if got != want {
					t.Errorf("windows of five samples print %d bytes, the default windows %d; first difference at byte %d",
						len(got), len(want), firstDiff(got, want))
				}
				if fmt.Sprint(gotNotes) != fmt.Sprint(wantNotes) {
					t.Errorf("notes %q, with the default windows %q", gotNotes, wantNotes)
				}
			})
		}
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
