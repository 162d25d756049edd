package unwind

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
)

// perfScriptStacks runs `perf script -F ip,dso` on a recording and returns
// every sample's frames as perf printed them (object addresses for mapped
// user frames, runtime addresses for the kernel), inlined entries dropped.
func perfScriptStacks(t *testing.T, data string) [][]uint64 {
	t.Helper()
	perfBin, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not installed: no independent unwinder to compare with")
	}
	out, err := exec.Command(perfBin, "script", "-F", "ip,dso", "-i", data).Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	var stacks [][]uint64
	in := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "\t") {
			in = false
			continue
		}
		a, err := strconv.ParseUint(strings.Fields(line)[0], 16, 64)
		if err != nil {
			t.Fatalf("perf script line %q: %v", line, err)
		}
		if !in {
			stacks = append(stacks, nil)
			in = true
		}
		// an address with inlined functions is printed once per function
		if st := stacks[len(stacks)-1]; len(st) > 0 && st[len(st)-1] == a {
			continue
		}
		stacks[len(stacks)-1] = append(stacks[len(stacks)-1], a)
	}
	return stacks
}

// TestDWARFAgainstPerf unwinds a --call-graph dwarf recording of a program
// that calls through libc and compares each sample with perf 6.1's own
// DWARF unwinding of the same file. perf prints a return address minus one
// (LookupAddr) and, on this machine, loses the frames of glibc's recursive
// msort_with_tmp in most samples (it goes from cmp straight to the outermost
// msort call, a call that cannot call cmp): so every frame perf printed
// must appear in hwprof's stack in the same order, and the count of samples
// where hwprof has frames perf lacks is reported. The first frames must be
// equal: that checks procmap's object-address arithmetic on every sample
// (PIE executable, ld.so, libc, kernel).
func TestDWARFAgainstPerf(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	t.Parallel() // its own program and files; it measures no time
	dir := t.TempDir()
	prog := testprog.Build(t, "c/qsortcmp.c", "-O1", "-g", "-fomit-frame-pointer")
	data := recordDWARF(t, dir, prog, "200")
	want := perfScriptStacks(t, data)
	// The program reads the clock (it runs for a set CPU time), so some
	// samples are in the vdso: unwind through it with this machine's
	// image, as perf does and as hwprof does for a recording made here.
	vdso, err := LocalVDSO()
	if err != nil {
		t.Logf("no vdso image (%v): samples in the vdso stop there", err)
	}
	u := New(Options{VDSO: vdso})
	var n, missing, sameFirst, deeper int
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		frames, stop := u.Unwind(s, m)
		if n >= len(want) {
			n++
			return
		}
		var g []uint64
		for _, f := range frames {
			if f.Object != nil && !f.Kernel {
				g = append(g, uint64(f.LookupAddr()))
			} else {
				g = append(g, uint64(f.Addr))
			}
		}
		w := want[n]
		if !subsequence(w, g) {
			if missing++; missing <= 3 {
				t.Errorf("sample %d (pid %d tid %d ip %#x, %d stack bytes): perf unwound\n %s\nhwprof (%v)\n %s",
					n, s.PID, s.TID, s.IP, len(s.StackUser.Data), hexes(w), stop, hexes(g))
			}
		}
		if len(g) > 0 && len(w) > 0 && g[0] == w[0] {
			sameFirst++
		}
		if len(g) > len(w) {
			deeper++
		}
		n++
	})
	if n != len(want) {
		t.Errorf("%d samples, perf script printed %d", n, len(want))
	}
	if missing > 0 {
		// a rare sample (one in a thousand runs) is worth keeping:
		// HWPROF_KEEP_FAILED=DIR copies the recording and program there
		if keep := os.Getenv("HWPROF_KEEP_FAILED"); keep != "" {
			if b, err := exec.Command("cp", data, prog, keep).CombinedOutput(); err != nil {
				t.Logf("keeping the recording: %v %s", err, b)
			}
		}
		t.Errorf("%d of %d samples have frames perf found and hwprof did not", missing, n)
	}
	if sameFirst != n {
		t.Errorf("the first frame (the sample's address in its object) differs from perf's in %d of %d samples", n-sameFirst, n)
	}
	t.Logf("%d samples: every frame perf found is in hwprof's stack; same first frame in %d; hwprof has more frames in %d", n, sameFirst, deeper)
}

// subsequence reports whether short appears in long in order.
func subsequence(short, long []uint64) bool {
	i := 0
	for _, v := range long {
		if i < len(short) && short[i] == v {
			i++
		}
	}
	return i == len(short)
}
