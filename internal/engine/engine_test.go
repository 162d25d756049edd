package engine

import (
	"bufio"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/symbolize"
	"github.com/hwprof/hwprof/unwind"
)

// TestReportAndScriptNameFramesAlike reads every fixture two ways: as
// report does (Load, its stack cache and fold) and as hwprof script does
// (the engine's Visit, every frame symbolized at its lookup address), and
// checks that each sample's frames are named the same, frame by frame.
// Objects are looked for under an empty --symfs, except the two programs
// the fixture folder holds.
func TestReportAndScriptNameFramesAlike(t *testing.T) {
	fx := fixtures.Dir(t)
	empty := t.TempDir()
	auto := filepath.Join(fx, "autofdo")
	bin := filepath.Join(auto, "test.binary")
	prop := filepath.Join(auto, "propeller_sample_1.bin")
	bid, err := buildid.Read(prop)
	id := bid.String()
	if err != nil || id == "" {
		t.Fatalf("build-id of %s: %q, %v", prop, id, err)
	}
	debugDir := t.TempDir()
	fixtures.Place(t, prop, filepath.Join(debugDir, id))
	opts := map[string]LoadOptions{
		"autofdo/test.lbr":                     {Objects: map[string]string{"/export/hda3/tmp/test.binary": bin}},
		"autofdo/propeller_sample_1.perfdata1": {SymFS: empty, DebugDirs: []string{debugDir}},
	}
	named := 0
	for _, name := range expectedFixtures(t, fx) {
		o, ok := opts[name]
		if !ok {
			o = LoadOptions{SymFS: empty}
		}
		o.Seed = 1
		t.Run(name, func(t *testing.T) {
			rep := reportNames(t, filepath.Join(fx, name), o)
			scr := scriptNames(t, filepath.Join(fx, name), o)
			if len(rep) != len(scr) {
				t.Fatalf("report folded %d samples, script printed %d", len(rep), len(scr))
			}
			bad, broken := 0, 0
			for i := range rep {
				if rep[i] == nil { // folded as one [broken stack] frame
					broken++
					continue
				}
				if !slices.Equal(rep[i], scr[i]) {
					if bad++; bad <= 3 {
						t.Errorf("sample %d: report %q, script %q", i, rep[i], scr[i])
					}
				}
				for _, n := range rep[i] {
					if n != "" {
						named++
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d samples named differently", bad, len(rep))
			}
			if broken > 0 {
				t.Logf("%d of %d samples are broken stacks, not compared", broken, len(rep))
			}
		})
	}
	if named == 0 {
		t.Error("no frame of any fixture was named: the comparison compared nothing")
	}
}

func expectedFixtures(t *testing.T, fx string) []string {
	f, err := os.Open(filepath.Join(fx, "EXPECTED.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), "\t")
		if name != "" && name != "file" {
			out = append(out, name)
		}
	}
	return out
}

// funcName is the name a symbol gives a function ("" without one).
func funcName(loc symbolize.Location) string {
	if loc.Symbol == nil {
		return ""
	}
	n := loc.Symbol.Name
	return cmp.Or(n.Short, n.Full, n.Raw)
}

// reportNames loads path as report does and returns, per sample, the
// names of its folded frames, innermost first ("" for an unnamed one);
// nil for a sample folded as a broken stack.
func reportNames(t *testing.T, path string, o LoadOptions) [][]string {
	var stacks [][]ccmap.FuncID
	var fmap []ccmap.FuncID
	p, _ := load(path, o, testOptions{inline: true, noFast: true, funcMap: &fmap,
		sampleHook: func(s *perf.Sample, frames []ccmap.Frame) {
			ids := make([]ccmap.FuncID, len(frames))
			for i, f := range frames {
				ids[i] = f.Func
			}
			stacks = append(stacks, ids)
		}})
	if p == nil {
		t.Skipf("report cannot open %s", path)
	}
	out := make([][]string, len(stacks))
	for i, ids := range stacks {
		if len(ids) == 1 && p.Funcs[fmap[ids[0]]].Name == profile.BrokenStack {
			continue
		}
		for _, id := range ids {
			n := p.Funcs[fmap[id]].Name
			if strings.HasPrefix(n, "[") {
				n = ""
			}
			out[i] = append(out[i], n)
		}
	}
	return out
}

// scriptNames visits path as hwprof script does and returns, per sample,
// the names of its frames.
func scriptNames(t *testing.T, path string, o LoadOptions) [][]string {
	r, err := perfdata.Open(path)
	if err != nil {
		t.Skipf("script cannot open %s: %v", path, err)
	}
	defer r.Close()
	e := New(r, Options{SymFS: o.SymFS, DebugDirs: o.DebugDirs, Objects: o.Objects})
	defer e.Close()
	var handles [][]Handle
	e.Visit(func(s *perf.Sample, ev int, frames []unwind.Frame) {
		hs := make([]Handle, len(frames))
		for i, f := range frames {
			hs[i] = e.Symbols.Add(f.Object, s.PID, f.LookupAddr())
		}
		handles = append(handles, hs)
	})
	e.Symbols.Resolve(false)
	out := make([][]string, len(handles))
	for i, hs := range handles {
		for _, h := range hs {
			loc, _ := e.Symbols.Location(h)
			out[i] = append(out[i], funcName(loc))
		}
	}
	return out
}
