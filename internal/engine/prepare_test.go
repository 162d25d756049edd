package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/unwind"
)

// dwarfProg runs for the CPU seconds of its argument, in a call tree of
// its own (recursion, calls through libc's qsort and a function pointer),
// built without frame pointers so that only DWARF unwinding finds its
// callers.
const dwarfProg = `#include <stdlib.h>
#include <time.h>
volatile long sink;
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
__attribute__((noinline)) void leaf(int n) { for (int i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void rec(int d, int n) { if (d == 0) leaf(n); else { rec(d - 1, n); leaf(n / 4); } }
__attribute__((noinline)) void sortit(int *v, int n) { qsort(v, n, sizeof *v, cmp); }
int main(int argc, char **argv) {
	double limit = argc > 1 ? atof(argv[1]) : 1;
	int v[512];
	while ((double)clock() / CLOCKS_PER_SEC < limit) {
		for (int i = 0; i < 512; i++) v[i] = rand();
		sortit(v, 512);
		rec(5, 2000);
	}
	return 0;
}
`

// recordDWARFProg builds dwarfProg and records it with perf record
// --call-graph dwarf for 0.3 CPU seconds, once per test process (tests
// only read the recording); it skips when gcc or perf is missing or perf
// cannot record here.
func recordDWARFProg(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	dwarfRec.once.Do(func() { dwarfRec.data, dwarfRec.skip, dwarfRec.err = makeDWARFRecording() })
	if dwarfRec.skip != "" {
		t.Skip(dwarfRec.skip)
	}
	if dwarfRec.err != nil {
		t.Fatal(dwarfRec.err)
	}
	return dwarfRec.data
}

// dwarfRec is the recording of recordDWARFProg, in dwarfRec.dir, which
// TestMain removes.
var dwarfRec struct {
	once            sync.Once
	dir, data, skip string
	err             error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dwarfRec.dir != "" {
		os.RemoveAll(dwarfRec.dir)
	}
	os.Exit(code)
}

// makeDWARFRecording makes the recording of recordDWARFProg: its path,
// or why the test skips, or the error that fails it.
func makeDWARFRecording() (data, skip string, err error) {
	if _, err := exec.LookPath("gcc"); err != nil {
		return "", "gcc not installed", nil
	}
	perfBin, err := exec.LookPath("perf")
	if err != nil {
		return "", "perf not installed", nil
	}
	dir, err := os.MkdirTemp("", "engine-dwarf-")
	if err != nil {
		return "", "", err
	}
	dwarfRec.dir = dir
	src, bin, data := filepath.Join(dir, "prog.c"), filepath.Join(dir, "prog"), filepath.Join(dir, "dwarf.data")
	if err := os.WriteFile(src, []byte(dwarfProg), 0o644); err != nil {
		return "", "", err
	}
	if out, err := exec.Command("gcc", "-O1", "-g", "-fomit-frame-pointer", "-o", bin, src).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("gcc: %v\n%s", err, out)
	}
	cmd := exec.Command(perfBin, "record", "-q", "-e", "cpu-clock", "-c", "100000", "--call-graph", "dwarf,8192", "-o", data, "--", bin, "0.3")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("perf record cannot record here: %v\n%s", err, out), nil
	}
	return data, "", nil
}

// TestPreparersFoldTheSame loads every recording of the shared fixtures
// and a live --call-graph dwarf recording with 1, 2 and 4 preparers and
// with every sample prepared and folded on the reading goroutine: the
// profiles, recording facts, warnings and errors must be the same. Then
// it checks keyFrames on every sample of them.
func TestPreparersFoldTheSame(t *testing.T) {
	paths := fixtureRecordings(t)
	dwarf := recordDWARFProg(t)
	paths = append(paths, dwarf)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, wantErr := inlineLoad(path)
			if path == dwarf {
				if want == nil || want.Recording.Samples == 0 {
					t.Fatalf("no samples loaded from the DWARF recording: %v", wantErr)
				}
				deep := 0
				for _, c := range want.Map.CCT(ccmap.Total).Nodes {
					if c.Depth >= 4 {
						deep++
					}
				}
				if deep == 0 {
					t.Fatal("no stack of the DWARF recording was unwound 4 frames deep")
				}
			}
			for _, workers := range []int{1, 2, 4} {
				got, gotErr := load(path, LoadOptions{Seed: 1, Workers: workers}, testOptions{})
				sameLoad(t, got, gotErr, want, wantErr)
			}
		})
	}
	// the DWARF recording, and perf's frame-pointer recording with
	// broken stacks (TestBrokenStackFixture)
	fp := filepath.Join(fixtures.Dir(t), "perf_data_converter", "perf.data.callgraph-3.8")
	t.Run("keyFrames", func(t *testing.T) { checkKeyFrames(t, []string{dwarf, fp}) })
}

// TestPreloadTheSame loads a live --call-graph dwarf recording (of a
// program of its own calling into libc) with the objects' symbols read
// ahead while the records are read (PreloadObject) and without: the
// profiles, recording facts, warnings and errors must be the same, and
// the symbols of the program and libc at least must have been read ahead.
func TestPreloadTheSame(t *testing.T) {
	path := recordDWARFProg(t)
	want, wantErr := load(path, LoadOptions{Seed: 1}, testOptions{noPreload: true})
	if want == nil || want.Recording.Samples == 0 {
		t.Fatalf("no samples loaded: %v", wantErr)
	}
	var n int
	got, gotErr := load(path, LoadOptions{Seed: 1}, testOptions{preloads: &n})
	sameLoad(t, got, gotErr, want, wantErr)
	if n < 2 {
		t.Errorf("%d objects' symbols read ahead, want the program's and libc's at least", n)
	}
	names := map[string]bool{}
	for _, f := range want.Funcs {
		names[f.Name] = true
	}
	for _, name := range []string{"leaf", "rec", "sortit", "main"} {
		if !names[name] {
			t.Errorf("no function %s in the profile: the program's symbols were not read", name)
		}
	}
}

// checkKeyFrames checks prepare's one pass over an unwound stack
// (keyFrames) against brokenStack and frameKey frame by frame, on every
// sample of the recordings.
func checkKeyFrames(t *testing.T, paths []string) {
	checked, broken := 0, 0
	for _, path := range paths {
		r, err := perfdata.Open(path)
		if err != nil {
			continue // the truncated and corrupt fixtures
		}
		e := New(r, Options{})
		code := newCodeReader(e.Objects.File)
		rtA, rtB := newRetTable(code), newRetTable(code)
		var keys []addrKey
		e.Visit(func(s *perf.Sample, _ int, frames []unwind.Frame) {
			var isBroken bool
			keys, isBroken = keyFrames(&rtA, keys[:0], frames, s.PID)
			want := brokenStack(&rtB, frames)
			if isBroken != want {
				t.Fatalf("%s: keyFrames says broken %v, brokenStack %v: %+v", path, isBroken, want, frames)
			}
			checked++
			if isBroken {
				broken++
				return
			}
			var wantKeys []addrKey
			for i := range frames {
				wantKeys = append(wantKeys, frameKey(&rtB, &frames[i], s.PID))
			}
			if len(keys) != len(wantKeys) || (len(keys) > 0 && !reflect.DeepEqual(keys, wantKeys)) {
				t.Fatalf("%s: keys %v, frameKey gives %v", path, keys, wantKeys)
			}
		})
		code.close()
		e.Close()
		r.Close()
	}
	if checked < 1000 || broken == 0 {
		t.Errorf("%d stacks checked, %d broken: want more than 1000, some broken", checked, broken)
	}
	t.Logf("%d stacks checked, %d broken", checked, broken)
}
