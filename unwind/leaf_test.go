package unwind

import (
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
)

func TestUserStart(t *testing.T) {
	k, u := perf.ContextKernel, perf.ContextUser
	for _, tt := range []struct {
		name  string
		chain []uint64
		want  int
	}{
		{"kernel then user", []uint64{k, 0xffffffff81000000, u, 0x401000, 0x401234}, 3},
		{"user only", []uint64{u, 0x401000}, 1},
		{"no markers", []uint64{0x401000, 0x401234}, 0},
		{"kernel only", []uint64{k, 0xffffffff81000000}, -1},
		{"empty user part", []uint64{k, 0xffffffff81000000, u}, -1},
		{"empty", nil, -1},
	} {
		if g := userStart(tt.chain); g != tt.want {
			t.Errorf("%s: userStart = %d, want %d", tt.name, g, tt.want)
		}
	}
}

// A sample the repair cannot check keeps its chain, untouched.
func TestRepairCallchainNotChecked(t *testing.T) {
	chain := []uint64{perf.ContextUser, 0x401000, 0x401234}
	regsFor := func(ip uint64) perf.Regs {
		return perf.Regs{ABI: perf.RegsABI64, Mask: 1<<perf.RegIP | 1<<perf.RegSP, Values: []uint64{0x7ff000, ip}}
	}
	stack := perf.StackUser{Data: make([]byte, 64), DynSize: 64}
	base := perf.Sample{Callchain: chain}
	for _, tt := range []struct {
		name string
		s    perf.Sample
	}{
		{"no stack copy", withType(base, perf.SampleCallchain)},
		{"IP differs from the chain's", withRegs(withType(base, perf.SampleCallchain|perf.SampleRegsUser|perf.SampleStackUser), regsFor(0x402000), stack)},
		{"no callchain", withRegs(withType(perf.Sample{}, perf.SampleRegsUser|perf.SampleStackUser), regsFor(0x401000), stack)},
	} {
		u := New(Options{})
		got, r := u.RepairCallchain(nil, &tt.s, nil)
		if r != LeafNotChecked || !slices.Equal(got, tt.s.Callchain) {
			t.Errorf("%s: RepairCallchain = %#x, %v; want the chain unchanged, not checked", tt.name, got, r)
		}
	}
	// in a mapping the process model does not know: unknown, unchanged
	s := withRegs(withType(base, perf.SampleCallchain|perf.SampleRegsUser|perf.SampleStackUser), regsFor(0x401000), stack)
	if got, r := New(Options{}).RepairCallchain(nil, &s, procmap.New(nil)); r != LeafUnknown || !slices.Equal(got, chain) {
		t.Errorf("unknown mapping: RepairCallchain = %#x, %v; want the chain unchanged, unknown", got, r)
	}
}

func withType(s perf.Sample, st perf.SampleType) perf.Sample {
	s.Present = st
	return s
}

func withRegs(s perf.Sample, r perf.Regs, st perf.StackUser) perf.Sample {
	s.RegsUser, s.StackUser = r, st
	return s
}

// TestRepairLeafFrames records a recursion whose innermost function has no
// frame (gcc -O2 -fno-omit-frame-pointer) with the timer source, which
// copies the top of the user stack, and checks every sample in the
// program: leaf, then rec 21 times, then main; a sample in rec, rec k
// times then main (rec's epilogue runs after `pop %rbp` too). The kernel's
// chains alone must fail this for most leaf samples, or the test proves
// nothing.
func TestRepairLeafFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	t.Parallel() // its own program and files; it measures no time
	prog := testprog.Build(t, "c/leafrec.c", "-O2", "-g", "-fno-omit-frame-pointer")
	data := hwprofRecord(t, t.TempDir(), []string{"--source", "timer", "-c", "100000"}, prog, "2000")
	st := newSymtab(t, prog)
	u := New(Options{})
	var inProg, ok, leaf, leafRaw int
	var bad []string
	repairs := map[LeafRepair]int{}
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		frames, _ := u.Unwind(s, m)
		user := userFrames(frames)
		if len(user) == 0 || !slices.Contains([]string{"leaf", "rec"}, st.name(user[0])) {
			return
		}
		_, r := u.RepairCallchain(nil, s, m)
		repairs[r]++
		inProg++
		if wantLeafStack(user, st) {
			ok++
		} else if len(bad) < 5 {
			bad = append(bad, r.String()+": "+describe(user, st))
		}
		if st.name(user[0]) == "leaf" {
			leaf++
			if wantLeafStack(userFrames(AppendCallchain(nil, s, m)), st) {
				leafRaw++
			}
		}
	})
	t.Logf("%d samples in leaf or rec, %d right (%.2f%%); repairs %v; leaf samples right from the kernel's chain alone: %d of %d",
		inProg, ok, 100*float64(ok)/float64(max(inProg, 1)), repairs, leafRaw, leaf)
	judgeRepair(t, "leaf", inProg, ok, bad, leaf, leafRaw)
}

// judgeRepair fails a leaf-repair test whose recording had fewer than 100
// samples in the function the program hides frames of (of, raw of them
// right from the kernel's chain alone), fewer than 99% of the judged
// samples unwound right, or half of those in the function right without
// the repair: the program no longer shows what the test is about.
func judgeRepair(t *testing.T, fn string, judged, right int, bad []string, of, raw int) {
	t.Helper()
	if of < 100 {
		t.Fatalf("only %d samples in %s: the recording is too short to judge", of, fn)
	}
	if right*100 < judged*99 {
		t.Errorf("%d of %d samples unwound right, want ≥ 99%%; first failures:\n%s", right, judged, strings.Join(bad, "\n"))
	}
	if raw*2 > of {
		t.Errorf("%d of %d samples in %s were right without the repair: the program no longer hides the frames (check gcc's output)", raw, of, fn)
	}
}

func userFrames(frames []Frame) []Frame {
	var user []Frame
	for _, f := range frames {
		if !f.Kernel {
			user = append(user, f)
		}
	}
	return user
}

// wantLeafStack: [leaf] rec×k main, k = 21 below leaf and 1..21 otherwise,
// then only frames outside the program.
func wantLeafStack(frames []Frame, st *symtab) bool {
	i := 0
	isLeaf := len(frames) > 0 && st.name(frames[0]) == "leaf"
	if isLeaf {
		i++
	}
	k := 0
	for i < len(frames) && st.name(frames[i]) == "rec" {
		i++
		k++
	}
	if k == 0 || k > 21 || isLeaf && k != 21 || i >= len(frames) || st.name(frames[i]) != "main" {
		return false
	}
	for _, f := range frames[i+1:] {
		if n := st.name(f); n == "?" || n == "rec" || n == "leaf" || n == "main" {
			return false
		}
	}
	return true
}

// TestRepairNestedLeafFrames records testdata/c/leafnest.c, where main
// calls outer and outer calls inner, both without frame pointers (as a
// libc wrapper calling libc's internal routine), with the timer source,
// and checks every sample in inner: inner, outer, main. The kernel's
// chain skips both outer and main there (rbp is still main's frame), so
// the repair has to walk two frames by their CFI; the kernel's chains
// alone must fail for most samples, or the test proves nothing.
func TestRepairNestedLeafFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	t.Parallel()
	prog := testprog.Build(t, "c/leafnest.c", "-O2", "-g", "-fno-omit-frame-pointer")
	data := hwprofRecord(t, t.TempDir(), []string{"--source", "timer", "-c", "100000"}, prog, "0.5")
	st := newSymtab(t, prog)
	u := New(Options{})
	want := []string{"inner", "outer", "main"}
	var inner, ok, raw int
	var bad []string
	repairs := map[LeafRepair]int{}
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		user := userFrames(func() []Frame { f, _ := u.Unwind(s, m); return f }())
		if len(user) == 0 || st.name(user[0]) != "inner" {
			return
		}
		inner++
		_, r := u.RepairCallchain(nil, s, m)
		repairs[r]++
		names := func(frames []Frame) []string {
			var n []string
			for _, f := range frames[:min(len(frames), len(want))] {
				n = append(n, st.name(f))
			}
			return n
		}
		if slices.Equal(names(user), want) {
			ok++
		} else if len(bad) < 5 {
			bad = append(bad, r.String()+": "+describe(user, st))
		}
		if slices.Equal(names(userFrames(AppendCallchain(nil, s, m))), want) {
			raw++
		}
	})
	t.Logf("%d samples in inner, %d right; repairs %v; right from the kernel's chain alone: %d", inner, ok, repairs, raw)
	judgeRepair(t, "inner", inner, ok, bad, inner, raw)
}
