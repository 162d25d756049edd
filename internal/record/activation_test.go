package record

import (
	"debug/elf"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/tuning"
)

// phasedFlags build scripts/bench-adaptive.sh's phased as the script
// does, at fixed addresses (-no-pie) so that the ELF's symbols are the
// running program's.
var phasedFlags = []string{"-O2", "-g", "-fno-omit-frame-pointer", "-no-pie"}

// TestKeptFromCode: the activation key's Kept, read from a running
// program's code, marks the caller-saved registers its leaf fa (which
// returns a long: it writes rax) leaves alone, and is 0 once the
// program has exited and its code cannot be read.
func TestKeptFromCode(t *testing.T) {
	prog := testprog.Build(t, "c/adaptive_phased.c", phasedFlags...)
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var fa uint64
	for _, s := range syms {
		if s.Name == "fa" && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			fa = s.Value
		}
	}
	if fa == 0 {
		t.Fatal("no symbol fa")
	}
	cmd := exec.Command(prog, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := uint32(cmd.Process.Pid)
	// Start returns once execve has closed the pipe, which it does
	// before it maps the program: wait for the code to be mapped.
	for deadline := time.Now().Add(10 * time.Second); !codeMapped(pid, prog); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%s's code is not mapped in process %d after 10 s", prog, pid)
		}
	}
	ad := &adaptive{}
	kept := ad.kept(pid, fa)
	cmd.Process.Kill()
	cmd.Wait()
	if kept == 0 || kept&1 != 0 { // bit 0: rax (scratchRegs[0])
		t.Errorf("Kept at fa %#x = %09b: want the caller-saved registers but rax", fa, kept)
	}
	for i, r := range scratchRegs {
		if kept&(1<<i) == 0 && r != perf.RegAX {
			t.Logf("fa writes register %d", r)
		}
	}
	if got := (&adaptive{}).kept(pid, fa); got != 0 {
		t.Errorf("Kept of an exited process = %09b, want 0", got)
	}
}

// codeMapped reports whether process pid maps prog executable.
func codeMapped(pid uint32, prog string) bool {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(line); len(f) >= 6 && strings.Contains(f[1], "x") && f[5] == prog {
			return true
		}
	}
	return false
}

// TestAdaptiveLoopInCallerSavedRegisters: phased's call phase, a loop
// over small leaves whose state gcc -O2 keeps in caller-saved registers
// across the calls, repeats no activation, so the adaptive period must
// not grow for repetition there. With the callee-saved key alone it read
// 25% repetition and grew the period at 0.4 s. The phase lasts half the
// program's 2.4 s of CPU time, and wall time is at least that; the
// samples carry the caller-saved registers the key reads.
func TestAdaptiveLoopInCallerSavedRegisters(t *testing.T) {
	needPerfEvents(t)
	// as hwprof record does: the leaf repair's copy, then the period
	events, p, tuned := adaptiveCPUClockWith(t, budgeted(t), func(evs []perf.Event) { source.AddLeafCopy(evs, source.LeafStackBytes) })
	if m := events[0].Attr.SampleRegsUser; m&ScratchRegsUser != ScratchRegsUser {
		t.Fatalf("sample_regs_user %#x lacks the caller-saved registers %#x", m, ScratchRegsUser)
	}
	prog := testprog.Build(t, "c/adaptive_phased.c", phasedFlags...)
	out := filepath.Join(t.TempDir(), "phased.data")
	st := recordAdaptive(t, Options{Events: events, Argv: []string{prog, "2.4"}, Output: out, Adaptive: &p, Tuned: tuned})
	for _, c := range st.Periods {
		t.Logf("%.3fs period %d: %s", c.Time.Seconds(), c.Period, c.Reason)
		if c.Time < time.Second && strings.Contains(c.Reason, "repetition") && strings.Contains(c.Reason, "grow") {
			t.Errorf("period grown for repetition at %.3fs, in the call phase: %s", c.Time.Seconds(), c.Reason)
		}
	}
	r, err := perfdata.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var s perf.Sample
	n := 0
	for r.Next() {
		if r.Record().Type() != perf.RecordSample {
			continue
		}
		if err := r.DecodeSample(&s); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.RegsUser.Get(perf.RegR8 + 3); !ok {
			t.Fatalf("sample without r11: regs mask %#x", s.RegsUser.Mask)
		}
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Errorf("%d samples in 2.4 s of CPU at 4 kHz or less often", n)
	}
}

// TestForgetCodeOnExec: an exec (COMM with the exec flag) and a new
// executable mapping drop what the activation key read of a process's
// code, whose addresses now hold other code; a plain COMM (a thread's
// new name) and a data mapping keep it.
func TestForgetCodeOnExec(t *testing.T) {
	attr := cpuClock(250000, event.TargetCommand).Attr
	f, err := perf.NewSampleFormat(attr)
	if err != nil {
		t.Fatal(err)
	}
	const pid = 42
	pidTid := uint64(pid) | uint64(pid)<<32
	rec := func(typ perf.RecordType, misc uint16, body ...uint64) []byte {
		body = append(body, pidTid, 1000) // sample_id_all: TID, TIME
		b := make([]byte, 8+8*len(body))
		le.PutUint32(b, uint32(typ))
		le.PutUint16(b[4:], misc)
		le.PutUint16(b[6:], uint16(len(b)))
		for i, v := range body {
			le.PutUint64(b[8+8*i:], v)
		}
		return b
	}
	comm := uint64(0x6f6f66) // "foo"
	// MMAP: pid/tid, addr, len, pgoff, then the file name
	for _, c := range []struct {
		name   string
		rec    []byte
		forget bool
	}{
		{"comm", rec(perf.RecordComm, 0, pidTid, comm), false},
		{"comm exec", rec(perf.RecordComm, perf.MiscCommExec, pidTid, comm), true},
		{"data mmap", rec(perf.RecordMmap, perf.MiscMmapData|perf.MiscUser, pidTid, 0x1000, 0x1000, 0, comm), false},
		{"code mmap", rec(perf.RecordMmap, perf.MiscUser, pidTid, 0x1000, 0x1000, 0, comm), true},
	} {
		r := &recorder{format: f, adaptive: &adaptive{}}
		r.adaptive.kept(pid, 0x1000) // reads nothing (no such process, most likely): keeps an analyzer all the same
		if r.adaptive.clobberers[pid] == nil {
			t.Fatalf("%s: no analyzer kept for pid %d", c.name, pid)
		}
		r.note(c.rec)
		if gone := r.adaptive.clobberers[pid] == nil; gone != c.forget {
			t.Errorf("%s: analyzer dropped %v, want %v", c.name, gone, c.forget)
		}
	}
}

// TestCountSampleLBRWithKey: an LBR sample that also carries the leaf
// copy (as the lbr and calls sources record it) feeds both the
// activation key and the overlap of consecutive LBR windows; the key
// once made the windows go unseen.
func TestCountSampleLBRWithKey(t *testing.T) {
	attr := perf.Attr{
		Type: perf.TypeRaw, Config: 0x20c4, SamplePeriod: 100003,
		SampleType: perf.SampleIP | perf.SampleTID | perf.SampleCallchain | perf.SampleBranchStack |
			perf.SampleRegsUser | perf.SampleStackUser,
		BranchSampleType: perf.BranchUser | perf.BranchAnyCall,
		SampleRegsUser:   source.LeafRegsUser, SampleStackUser: 8,
	}
	f, err := perf.NewSampleFormat(attr)
	if err != nil {
		t.Fatal(err)
	}
	sample := func(sp uint64) []byte {
		var body []uint64
		body = append(body, 0x401000, 7|7<<32)                       // IP, PID/TID
		body = append(body, 3, perf.ContextUser, 0x401000, 0x401100) // callchain
		body = append(body, 2)                                       // branch stack: 2 entries
		for i := range uint64(2) {
			body = append(body, 0x401000+16*i, 0x402000+16*i, 0)
		}
		body = append(body, 2) // regs: ABI 64, then one per bit of the mask, lowest first
		for range bits.OnesCount64(source.LeafRegsUser) {
			body = append(body, sp)
		}
		body = append(body, 8, 0x401100, 8) // stack: size, data, dyn_size
		b := make([]byte, 8+8*len(body))
		le.PutUint32(b, uint32(perf.RecordSample))
		le.PutUint16(b[6:], uint16(len(b)))
		for i, v := range body {
			le.PutUint64(b[8+8*i:], v)
		}
		return b
	}
	c, err := tuning.New(tuning.DefaultPolicy(), tuning.Count, 100003)
	if err != nil {
		t.Fatal(err)
	}
	ad := &adaptive{tuners: []tuner{{ctl: c, repeats: tuning.NewRepeatCounter(16)}}}
	for _, sp := range []uint64{0x7ff000, 0x7ff000, 0x7fe000} {
		ad.countSample(f, 0, sample(sp))
	}
	tu := &ad.tuners[0]
	if tu.lbrPairs != 2 || tu.lbrOverlap != 2 {
		t.Errorf("LBR windows: %d pairs, overlap sum %v; want 2 pairs of the same window", tu.lbrPairs, tu.lbrOverlap)
	}
	if n, repeats := tu.repeats.Take(); n != 3 || repeats != 1 {
		t.Errorf("activation key: %d samples, %d repeats; want 3 and 1 (the stack pointer moved once)", n, repeats)
	}
}
