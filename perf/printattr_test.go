package perf

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testenv"
)

var updatePrintAttr = flag.Bool("update-printattr", false, "rewrite testdata/fprintattr-all-fields.golden")

// TestFprintAttrPerfBlocks prints attrs whose perf 6.1 rendering is kept
// in testdata/perf61-attr-blocks.txt. Provenance: `perf record -vv` (perf
// 6.1.187, Linux 6.18 VM) with
//
//  1. -e cpu-clock --call-graph dwarf --transaction -W -d --intr-regs
//     --sample-cpu --phys-data --data-page-size --code-page-size
//     --clockid mono --switch-events --namespaces --all-cgroups -R
//     --sample-identifier --user-regs=ax,sp
//  2. -e mem:0x1000/8:rw (a hardware breakpoint)
//  3. -e cpu-clock, perf's own side-band dummy event (the second block)
//
// They reach fields event.BuildAttrs never sets: sample bits in perf's non-bit
// order, clockid, sample_regs_intr, bp_*, wakeup_watermark.
func TestFprintAttrPerfBlocks(t *testing.T) {
	track := FlagDisabled | FlagInherit | FlagMmap | FlagComm | FlagEnableOnExec | FlagTask |
		FlagSampleIDAll | FlagExcludeGuest | FlagMmap2 | FlagCommExec | FlagKsymbol | FlagBPFEvent
	attrs := []Attr{
		{
			Type: TypeSoftware, Size: 128, SamplePeriod: 4000,
			SampleType: SampleIP | SampleTID | SampleTime | SampleAddr | SampleCallchain | SampleCPU |
				SamplePeriod | SampleRaw | SampleRegsUser | SampleStackUser | SampleIdentifier |
				SampleRegsIntr | SampleDataSrc | SamplePhysAddr | SampleCgroup | SampleDataPageSize |
				SampleCodePageSize | SampleWeightStruct |
				SampleTransaction, // --transaction: set, but perf 6.1 does not print it
			ReadFormat: FormatID | FormatLost,
			Flags: track | FlagFreq | FlagMmapData | FlagExcludeCallchainUser | FlagUseClockID |
				FlagContextSwitch | FlagNamespaces | FlagCgroup,
			SampleRegsUser: 1<<RegAX | 1<<RegSP | 1<<RegIP, SampleStackUser: 8192,
			ClockID: 1, SampleRegsIntr: RegsUserX86_64,
		},
		{
			Type: TypeBreakpoint, Size: 128, SamplePeriod: 1, SampleType: SampleIP | SampleTID | SampleTime,
			ReadFormat: FormatID | FormatLost, Flags: track, BPType: 3, Config1: 0x1000, Config2: 8,
		},
		{
			Type: TypeSoftware, Size: 128, Config: SWDummy, WakeupEvents: 1,
			Flags: FlagWatermark | FlagSampleIDAll | FlagBPFEvent,
		},
	}
	var got bytes.Buffer
	for i := range attrs {
		if err := FprintAttr(&got, &attrs[i]); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(filepath.Join("testdata", "perf61-attr-blocks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if d := testenv.LineDiff(strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")); d != "" {
		t.Errorf("FprintAttr differs from perf (- perf, + hwprof):\n%s", d)
	}
}

// TestFprintAttrAllFields sets every field and every named bit, so each
// line FprintAttr can print is pinned by the golden file.
func TestFprintAttrAllFields(t *testing.T) {
	a := Attr{
		Type: TypeBreakpoint, Size: AttrSizeVer8, Config: 0xc4, SamplePeriod: 4000,
		SampleType: 1<<sampleTypeKnownBits - 1, ReadFormat: 1<<len(readFormatNames) - 1,
		Flags: 1<<len(attrFlagNames) - 1, PreciseIP: 3, WakeupEvents: 16, BPType: 3,
		Config1: 0x1000, Config2: 8, BranchSampleType: 1<<len(branchSampleNames) - 1,
		SampleRegsUser: RegsUserX86_64, SampleStackUser: 8192, ClockID: -1,
		SampleRegsIntr: 0x3, AuxWatermark: 4096, SampleMaxStack: 127, AuxSampleSize: 512,
		AuxAction: 7, SigData: 42, Config3: 0x5,
	}
	var got bytes.Buffer
	if err := FprintAttr(&got, &a); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "fprintattr-all-fields.golden")
	if *updatePrintAttr {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-printattr to create it)", err)
	}
	if d := testenv.LineDiff(strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")); d != "" {
		t.Errorf("FprintAttr differs from %s (- golden, + got):\n%s", path, d)
	}
	for _, line := range []string{
		"  clockid                          -1\n",
		"  { wakeup_events, wakeup_watermark } 16\n",
		"  precise_ip                       3\n",
		"  sample_type                      IP|TID|TIME|ADDR|READ|CALLCHAIN|ID|CPU|PERIOD|STREAM_ID|RAW|BRANCH_STACK|REGS_USER|STACK_USER|IDENTIFIER|REGS_INTR|DATA_SRC|WEIGHT|PHYS_ADDR|AUX|CGROUP|DATA_PAGE_SIZE|CODE_PAGE_SIZE|WEIGHT_STRUCT\n",
	} {
		if !strings.Contains(got.String(), line) {
			t.Errorf("output lacks %q", line)
		}
	}
}

func TestFprintAttrZero(t *testing.T) {
	var b bytes.Buffer
	if err := FprintAttr(&b, &Attr{}); err != nil || b.String() != "perf_event_attr:\n" {
		t.Errorf("zero attr: %q, %v; want only the header", b.String(), err)
	}
}
