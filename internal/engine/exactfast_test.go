package engine

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/synth"
	"github.com/hwprof/hwprof/profile"
)

// exactFile writes a recording of probe hits as the exact source makes
// them, with sample type st (and, with REGS_USER, the registers of an
// older hwprof): repeated hits of a few (callee, return address,
// callchain) triples in code whose return addresses cannot be checked, a
// hit without a usable stack copy, and a mapping record half way (which
// empties the loader's caches).
func exactFile(t *testing.T, uprobeType uint32, st perf.SampleType) string {
	t.Helper()
	a := perf.Attr{Type: perf.EventType(uprobeType), SamplePeriod: 1, SampleType: st, SampleStackUser: uprobe.StackBytes,
		Flags: perf.FlagSampleIDAll | perf.FlagExcludeCallchainKernel}
	if st&perf.SampleRegsUser != 0 {
		a.SampleRegsUser = 1<<perf.RegIP | 1<<perf.RegSP | 1<<perf.RegBP
	}
	const id = 77
	path := filepath.Join(t.TempDir(), "exact.data")
	w, err := perfdata.Create(path, []perfdata.EventAttr{{Attr: a, IDs: []uint64{id}, Name: "hwprof_1:prog"}})
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	hit := func(i int, ip, ra uint64, chain []uint64, stack int) []byte {
		b := make([]byte, 8, 128)
		le.PutUint32(b, uint32(perf.RecordSample))
		b = le.AppendUint64(b, id)
		b = le.AppendUint64(b, ip)
		b = le.AppendUint64(b, 1|1<<32) // pid, tid
		b = le.AppendUint64(b, uint64(1000+i))
		if st&perf.SampleCPU != 0 {
			b = le.AppendUint64(b, 0)
		}
		if st&perf.SamplePeriod != 0 {
			b = le.AppendUint64(b, 1)
		}
		b = le.AppendUint64(b, uint64(1+len(chain)))
		b = le.AppendUint64(b, uint64(perf.ContextUser))
		for _, c := range chain {
			b = le.AppendUint64(b, c)
		}
		if st&perf.SampleRegsUser != 0 {
			b = le.AppendUint64(b, uint64(perf.RegsABI64))
			b = le.AppendUint64(b, 0x7ff000) // sp
			b = le.AppendUint64(b, 0x7ff010) // bp
			b = le.AppendUint64(b, ip)
		}
		b = le.AppendUint64(b, uprobe.StackBytes)
		b = le.AppendUint64(b, ra)
		b = le.AppendUint64(b, uint64(stack)) // dyn_size
		le.PutUint16(b[6:], uint16(len(b)))
		return b
	}
	hits := [][]uint64{ // callee, return address, then the callchain
		{0x401000, 0x402010, 0x401000, 0x402010, 0x403020},
		{0x401100, 0x401020, 0x401100, 0x401020, 0x402010, 0x403020},
		{0x401000, 0x402010, 0x401000, 0x402010, 0x403020},
		{0x401000, 0x402050},
	}
	// the code: a mapping whose return addresses the loader cannot check
	// (as JIT code or the vdso), so that every hit with a stack copy counts
	code := synth.Mapping{Start: 0x400000, End: 0x500000, Prot: 5, Flags: 2, Path: "[vdso]"}
	if err := w.WriteRecord(synth.AppendMmap2(nil, 1, 1, code, st, synth.SampleID{PID: 1, TID: 1, Time: 999, Identifier: id})); err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		if i == 200 {
			m := synth.Mapping{Start: 0x7f0000000000, End: 0x7f0000010000, Prot: 5, Flags: 2, Path: "/nonexistent/lib.so"}
			if err := w.WriteRecord(synth.AppendMmap2(nil, 1, 1, m, st, synth.SampleID{PID: 1, TID: 1, Time: uint64(1000 + i), Identifier: id})); err != nil {
				t.Fatal(err)
			}
		}
		h := hits[i%len(hits)]
		stack := 8
		if i == 7 {
			stack = 0 // no stack copy: not a call
		}
		if err := w.WriteRecord(hit(i, h[0], h[1], h[2:], stack)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFinishedRound(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(perfdata.Features{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExactFastTheSame loads exact recordings (this hwprof's sample type
// and the former one with the user registers) with and without
// foldExactHit and the exact cache's summing: the profiles, recording
// facts and warnings must be the same, and the fast path must have taken
// the repeated hits.
func TestExactFastTheSame(t *testing.T) {
	b, err := os.ReadFile(event.SysfsPMURoot + "/uprobe/type")
	if err != nil {
		t.Skipf("no uprobe PMU on this machine (%v): the loader tells exact recordings by its type", err)
	}
	typ, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []perf.SampleType{
		uprobe.SampleType,
		uprobe.SampleType | perf.SampleCPU | perf.SamplePeriod | perf.SampleRegsUser,
	} {
		t.Run(st.String(), func(t *testing.T) {
			path := exactFile(t, uint32(typ), st)
			o := LoadOptions{Seed: 1}
			want, wantErr := load(path, o, testOptions{inline: true, noFast: true, eachStack: true})
			var fast uint64
			got, gotErr := load(path, o, testOptions{fastCount: &fast})
			sameLoad(t, got, gotErr, want, wantErr)
			if want.Recording.Source != profile.Exact {
				t.Fatalf("source %v, want exact", want.Recording.Source)
			}
			if calls := want.Map.Totals().ContextCalls; calls != 399 {
				t.Errorf("%d calls in context, want 399 (400 hits, one without a stack copy)", calls)
			}
			if fast < 390 {
				t.Errorf("%d of 400 hits folded fast, want all but the first of each kind in each half", fast)
			}
		})
	}
}
