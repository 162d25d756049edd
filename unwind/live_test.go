package unwind

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// recordDWARF records prog with hwprof's recorder:
// hwprof record -e cpu-clock -c 200000 --call-graph dwarf,16384 -o F -- prog args...
func recordDWARF(t testing.TB, dir, prog string, args ...string) string {
	t.Helper()
	testenv.PerfEvents(t) // the machine can sample: hwprof failing is a failure
	return hwprofRecord(t, dir, []string{"-e", "cpu-clock", "-c", "200000", "--call-graph", "dwarf,16384", "-m", "8M"}, prog, args...)
}

// hwprofRecord records prog with the hwprof built for this test process
// (hwprofBinary): hwprof record -q OPTS -o dir/F -- prog args...,
// returning dir/F. A failure is hwprof's (an ordinary user at paranoid 2
// records user space), never a reason to skip.
func hwprofRecord(t testing.TB, dir string, opts []string, prog string, args ...string) string {
	t.Helper()
	hwprof := hwprofBinary(t)
	data := filepath.Join(dir, filepath.Base(prog)+".data")
	cmd := append(append(append([]string{"record", "-q"}, opts...), "-o", data, "--", prog), args...)
	if b, err := exec.Command(hwprof, cmd...).CombinedOutput(); err != nil {
		t.Fatalf("hwprof %s: %v\n%s", strings.Join(cmd, " "), err, b)
	}
	return data
}

// replay reads a recording in time order, feeds the process model, and
// calls fn for every sample.
func replay(t testing.TB, path string, fn func(s *perf.Sample, m *procmap.Map)) {
	t.Helper()
	r, err := perfdata.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := procmap.New(nil)
	var s perf.Sample
	for r.Next() {
		switch r.Record().Type() {
		case perf.RecordSample:
			if err := r.DecodeSample(&s); err != nil {
				t.Fatalf("decode sample at %#x: %v", r.Record().Offset, err)
			}
			fn(&s, m)
		case perf.RecordMmap, perf.RecordMmap2, perf.RecordComm, perf.RecordFork, perf.RecordExit:
			rec, err := r.Decode()
			if err != nil {
				t.Fatalf("decode record at %#x: %v", r.Record().Offset, err)
			}
			if err := m.Apply(rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

// recurseSamples records the deep recursion (testdata/c/recurse.c, built
// without frame pointers) with --call-graph dwarf and returns a copy of
// every sample and the process model at the last one.
func recurseSamples(t testing.TB) ([]perf.Sample, *procmap.Map) {
	t.Helper()
	prog := testprog.Build(t, "c/recurse.c", "-O1", "-g", "-fomit-frame-pointer")
	data := recordDWARF(t, t.TempDir(), prog, "150")
	var samples []perf.Sample
	var maps *procmap.Map
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		c := *s
		c.Callchain = slices.Clone(s.Callchain)
		c.RegsUser.Values = slices.Clone(s.RegsUser.Values)
		c.StackUser.Data = slices.Clone(s.StackUser.Data)
		samples = append(samples, c)
		maps = m
	})
	if len(samples) == 0 {
		t.Fatal("no samples")
	}
	return samples, maps
}

// symtab names addresses of one ELF file by its symbol table (the test's
// own, independent of package symbolize).
type symtab struct {
	path string
	syms []elf.Symbol
}

func newSymtab(t testing.TB, path string) *symtab {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var funcs []elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 {
			funcs = append(funcs, s)
		}
	}
	return &symtab{path: path, syms: funcs}
}

// name returns the function of f if f is in this file, "" otherwise, and
// "?" for an unmapped frame.
func (st *symtab) name(f Frame) string {
	if f.Object == nil {
		return "?"
	}
	if objPath(f) != st.path {
		return ""
	}
	a := uint64(f.LookupAddr())
	for _, s := range st.syms {
		if s.Value <= a && a < s.Value+s.Size {
			return s.Name
		}
	}
	return "?"
}

func describe(frames []Frame, st *symtab) string {
	var b strings.Builder
	for _, f := range frames {
		n := st.name(f)
		if n == "" && f.Object != nil {
			n = filepath.Base(objPath(f))
		}
		b.WriteString(n)
		b.WriteString(" ")
	}
	return b.String()
}

// TestDWARFDeepRecursion records a deep recursion built without frame
// pointers with --call-graph dwarf and unwinds every sample in the leaf:
// at least 99% must give leaf, rec × 31, main, and end cleanly. The
// reference is the program's known call structure, checked by the
// program's own symbol table; both hwprof's recorder and perf record make
// the recording.
func TestDWARFDeepRecursion(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	t.Parallel() // its own program and files; it measures no time
	dir := t.TempDir()
	prog := testprog.Build(t, "c/recurse.c", "-O1", "-g", "-fomit-frame-pointer")
	t.Run("hwprof record", func(t *testing.T) {
		checkRecursion(t, prog, recordDWARF(t, dir, prog, "400"))
	})
	t.Run("perf record", func(t *testing.T) {
		checkRecursion(t, prog, recordPerf(t, dir, prog, "1500"))
	})
}

// recordPerf records prog with perf itself:
// perf record -e cpu-clock -c 200000 --call-graph dwarf,16384 -o F -- prog args...
func recordPerf(t testing.TB, dir, prog string, args ...string) string {
	t.Helper()
	perfBin, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not installed")
	}
	data := filepath.Join(dir, filepath.Base(prog)+".perf.data")
	cmd := append([]string{"record", "-q", "-e", "cpu-clock", "-c", "200000", "--call-graph", "dwarf,16384", "-m", "2048", "-o", data, "--", prog}, args...)
	if b, err := exec.Command(perfBin, cmd...).CombinedOutput(); err != nil {
		t.Fatalf("perf %s: %v\n%s", strings.Join(cmd, " "), err, b)
	}
	return data
}

func checkRecursion(t *testing.T, prog, data string) {
	st := newSymtab(t, prog)
	u := New(Options{})
	var inLeaf, complete int
	stops := map[StopReason]int{}
	var bad []string
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		frames, stop := u.Unwind(s, m)
		if len(frames) == 0 || st.name(frames[0]) != "leaf" {
			return
		}
		inLeaf++
		stops[stop]++
		if ok := wantRecursion(frames, st); ok && stop.Complete() {
			complete++
		} else if len(bad) < 5 {
			bad = append(bad, stop.String()+": "+describe(frames, st))
		}
	})
	t.Logf("%d samples in leaf, %d complete (%.2f%%), stops %v", inLeaf, complete, 100*float64(complete)/float64(max(inLeaf, 1)), stops)
	if inLeaf < 100 {
		t.Fatalf("only %d samples in leaf: the recording is too short to judge", inLeaf)
	}
	if complete*100 < inLeaf*99 {
		t.Errorf("%d of %d leaf samples unwound completely, want ≥ 99%%; first failures:\n%s", complete, inLeaf, strings.Join(bad, "\n"))
	}
}

// wantRecursion checks leaf, rec × 31, main, then only frames outside the
// program (libc's start code).
func wantRecursion(frames []Frame, st *symtab) bool {
	if len(frames) < 33 || st.name(frames[0]) != "leaf" {
		return false
	}
	for _, f := range frames[1:32] {
		if st.name(f) != "rec" {
			return false
		}
	}
	if st.name(frames[32]) != "main" {
		return false
	}
	for _, f := range frames[33:] {
		if n := st.name(f); n == "?" || n == "rec" || n == "leaf" {
			return false
		}
	}
	return true
}

// TestDWARFThroughLibc unwinds samples in a qsort comparator: cmp, then
// libc's sort functions (built without frame pointers), then main.
func TestDWARFThroughLibc(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	t.Parallel() // its own program and files; it measures no time
	dir := t.TempDir()
	prog := testprog.Build(t, "c/qsortcmp.c", "-O1", "-g", "-fomit-frame-pointer")
	data := recordDWARF(t, dir, prog, "600")
	st := newSymtab(t, prog)
	u := New(Options{})
	var inCmp, complete int
	var bad []string
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		frames, stop := u.Unwind(s, m)
		if len(frames) == 0 || st.name(frames[0]) != "cmp" {
			return
		}
		inCmp++
		if throughLibc(frames, st) && stop.Complete() {
			complete++
		} else if len(bad) < 5 {
			bad = append(bad, stop.String()+": "+describe(frames, st))
		}
	})
	t.Logf("%d samples in cmp, %d complete through libc to main", inCmp, complete)
	if inCmp < 50 {
		t.Fatalf("only %d samples in cmp: the recording is too short to judge", inCmp)
	}
	if complete*100 < inCmp*99 {
		t.Errorf("%d of %d cmp samples unwound through libc to main, want ≥ 99%%; first failures:\n%s", complete, inCmp, strings.Join(bad, "\n"))
	}
}

func throughLibc(frames []Frame, st *symtab) bool {
	i := 1
	for i < len(frames) && frames[i].Object != nil && strings.Contains(filepath.Base(objPath(frames[i])), "libc") {
		i++
	}
	return i > 1 && i < len(frames) && st.name(frames[i]) == "main"
}

// TestDWARFThroughVDSO unwinds samples taken in the vdso (clock_gettime)
// with this machine's vdso image: they must reach libc's clock_gettime,
// spin and main; without
// the image the unwind stops in the vdso and says so.
func TestDWARFThroughVDSO(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	t.Parallel() // its own program and files; it measures no time
	image, err := LocalVDSO()
	if err != nil {
		t.Skipf("no vdso here: %v", err)
	}
	dir := t.TempDir()
	prog := testprog.Build(t, "c/clock.c", "-O1", "-g", "-fomit-frame-pointer")
	data := recordDWARF(t, dir, prog, "300")
	st := newSymtab(t, prog)
	with, without := New(Options{VDSO: image}), New(Options{})
	var inVDSO, complete, stoppedInVDSO int
	var bad []string
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		frames, stop := with.Unwind(s, m)
		if len(frames) == 0 || frames[0].Kernel || frames[0].Object == nil || frames[0].Object.Kind != addrspace.KindVDSO {
			return
		}
		inVDSO++
		i := 1
		for i < len(frames) && frames[i].Object != nil && (frames[i].Object.Kind == addrspace.KindVDSO ||
			strings.Contains(filepath.Base(objPath(frames[i])), "libc")) {
			i++ // the vdso, then libc's clock_gettime
		}
		if stop.Complete() && i+1 < len(frames) && st.name(frames[i]) == "spin" && st.name(frames[i+1]) == "main" {
			complete++
		} else if len(bad) < 5 {
			bad = append(bad, stop.String()+": "+describe(frames, st))
		}
		if f2, stop2 := without.Unwind(s, m); stop2 == StopNoObject && len(f2) == 1 {
			stoppedInVDSO++
		}
	})
	t.Logf("%d samples in the vdso, %d unwound to spin and main, %d stop there without the image", inVDSO, complete, stoppedInVDSO)
	if inVDSO < 50 {
		t.Fatalf("only %d samples in the vdso: too few to judge", inVDSO)
	}
	if complete*100 < inVDSO*99 {
		t.Errorf("%d of %d vdso samples unwound to main; first failures:\n%s", complete, inVDSO, strings.Join(bad, "\n"))
	}
	if stoppedInVDSO != inVDSO {
		t.Errorf("without the image, %d of %d vdso samples stopped in the vdso with %v", stoppedInVDSO, inVDSO, StopNoObject)
	}
}

// TestNoFDEFramePointer unwinds through a function that has no FDE
// (testdata/c/nofde.c: hand-written assembly that keeps a frame pointer,
// as the C runtime's __do_global_dtors_aux does, which a sample taken
// during exit meets): every sample in burn must reach main through nofde,
// as perf's unwinder does, and never show a frame the frame pointer did
// not lead to.
func TestNoFDEFramePointer(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	t.Parallel() // its own program and files; it measures no time
	prog := testprog.Build(t, "c/nofde.c", "-O1", "-g", "-fomit-frame-pointer")
	data := recordDWARF(t, t.TempDir(), prog, "150")
	st := newSymtab(t, prog)
	u := New(Options{})
	var inBurn, through int
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		frames, stop := u.Unwind(s, m)
		if len(frames) == 0 || st.name(frames[0]) != "burn" {
			return
		}
		inBurn++
		var names []string
		for _, f := range frames {
			names = append(names, st.name(f))
		}
		got := strings.Join(names, " ")
		if !strings.HasPrefix(got, "burn nofde main ") && got != "burn nofde main" {
			if inBurn-through <= 3 {
				t.Errorf("sample in burn unwound to %q (%v): %s", got, stop, describe(frames, st))
			}
			return
		}
		through++
	})
	switch {
	case inBurn == 0:
		t.Fatal("no sample in burn")
	case through != inBurn:
		t.Errorf("%d of %d samples in burn reached main through nofde", through, inBurn)
	default:
		t.Logf("%d samples in burn, all reached main through nofde", inBurn)
	}
}
