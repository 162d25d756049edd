package synth

import (
	"bytes"
	"math/bits"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// idFields are the sample_type bits that shape struct sample_id, in the
// kernel's order.
var idFields = []perf.SampleType{
	perf.SampleTID, perf.SampleTime, perf.SampleID,
	perf.SampleStreamID, perf.SampleCPU, perf.SampleIdentifier,
}

// TestSampleIDSizeAllCombinations checks all 64 subsets of the six
// sample_id fields, alone and mixed with bits that only shape samples.
func TestSampleIDSizeAllCombinations(t *testing.T) {
	others := []perf.SampleType{
		0,
		perf.SampleIP | perf.SamplePeriod,
		perf.SampleAddr | perf.SampleRead | perf.SampleCallchain | perf.SampleRaw |
			perf.SampleBranchStack | perf.SampleRegsUser | perf.SampleStackUser |
			perf.SampleWeight | perf.SampleDataSrc | perf.SampleTransaction |
			perf.SampleRegsIntr | perf.SamplePhysAddr | perf.SampleAux |
			perf.SampleCgroup | perf.SampleDataPageSize | perf.SampleCodePageSize |
			perf.SampleWeightStruct,
	}
	for mask := range 1 << len(idFields) {
		var st perf.SampleType
		for i, f := range idFields {
			if mask&(1<<i) != 0 {
				st |= f
			}
		}
		want := 8 * bits.OnesCount(uint(mask))
		for _, o := range others {
			if got := SampleIDSize(st | o); got != want {
				t.Errorf("SampleIDSize(%v) = %d, want %d", st|o, got, want)
			}
			b := AppendSampleID(nil, st|o, SampleID{PID: 1, TID: 2, Time: 3, ID: 4, StreamID: 5, CPU: 6, Identifier: 7})
			if len(b) != want {
				t.Errorf("AppendSampleID(%v) wrote %d bytes, want %d", st|o, len(b), want)
			}
		}
	}
}

func TestAppendSampleIDLayout(t *testing.T) {
	s := SampleID{PID: 0x11, TID: 0x22, Time: 0x3333, ID: 0x44, StreamID: 0x55, CPU: 0x6, Identifier: 0x77}
	tests := []struct {
		name string
		st   perf.SampleType
		want []byte
	}{
		{"none", perf.SampleIP | perf.SamplePeriod, nil},
		{"perf record default: TID|TIME", perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod, []byte{
			0x11, 0, 0, 0, 0x22, 0, 0, 0, // pid, tid
			0x33, 0x33, 0, 0, 0, 0, 0, 0, // time
		}},
		{"perf record -a: TID|TIME|CPU|IDENTIFIER", perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod | perf.SampleIdentifier, []byte{
			0x11, 0, 0, 0, 0x22, 0, 0, 0,
			0x33, 0x33, 0, 0, 0, 0, 0, 0,
			0x06, 0, 0, 0, 0, 0, 0, 0, // cpu, res
			0x77, 0, 0, 0, 0, 0, 0, 0, // identifier
		}},
		{"all six, kernel order", perf.SampleTID | perf.SampleTime | perf.SampleID | perf.SampleStreamID | perf.SampleCPU | perf.SampleIdentifier, []byte{
			0x11, 0, 0, 0, 0x22, 0, 0, 0,
			0x33, 0x33, 0, 0, 0, 0, 0, 0,
			0x44, 0, 0, 0, 0, 0, 0, 0, // id
			0x55, 0, 0, 0, 0, 0, 0, 0, // stream_id
			0x06, 0, 0, 0, 0, 0, 0, 0,
			0x77, 0, 0, 0, 0, 0, 0, 0,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendSampleID([]byte{0xee}, tt.st, s)
			if !bytes.Equal(got[1:], tt.want) || got[0] != 0xee {
				t.Errorf("got\n% x\nwant\n% x", got[1:], tt.want)
			}
		})
	}
}
