package ring

import (
	"encoding/binary"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

func TestSetWakeup(t *testing.T) {
	a := perf.Attr{Type: perf.TypeSoftware, Flags: perf.FlagDisabled}
	SetWakeup(&a, 128<<10)
	if !a.Flags.Has(perf.FlagWatermark|perf.FlagDisabled) || a.WakeupEvents != 128<<10 {
		t.Fatalf("attr flags %v wakeup %d", a.Flags, a.WakeupEvents)
	}
	b := a.Marshal()
	// bit 14 of the flag word is watermark; offset 48 is the union
	// wakeup_events/wakeup_watermark (<linux/perf_event.h>).
	if binary.LittleEndian.Uint64(b[40:])&(1<<14) == 0 || binary.LittleEndian.Uint32(b[48:]) != 128<<10 {
		t.Errorf("marshalled attr lacks the watermark: % x", b[40:52])
	}
}

func TestDefaultWatermark(t *testing.T) {
	tests := []struct {
		name  string
		bytes int
		want  uint32
	}{
		{"perf's default ring", DefaultDataPages * 4096, 128 << 10},
		{"one page", 4096, 1024},
		{"none", 0, 0},
		{"huge", 1 << 40, 1 << 31},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DefaultWatermark(tc.bytes); got != tc.want {
				t.Errorf("DefaultWatermark(%d) = %d, want %d", tc.bytes, got, tc.want)
			}
		})
	}
}
