package unwind

import (
	"encoding/binary"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

func TestEntryReturnAddress(t *testing.T) {
	var s perf.Sample
	if _, ok := EntryReturnAddress(&s); ok {
		t.Error("a sample without STACK_USER has a return address")
	}
	s.Present = perf.SampleStackUser
	s.StackUser.Data = binary.LittleEndian.AppendUint64(nil, 0x401234)
	s.StackUser.DynSize = 8
	if ra, ok := EntryReturnAddress(&s); !ok || ra != 0x401234 {
		t.Errorf("EntryReturnAddress = %#x, %v", ra, ok)
	}
	s.StackUser.DynSize = 4 // the stack ended before 8 bytes
	if _, ok := EntryReturnAddress(&s); ok {
		t.Error("a 4-byte stack copy gave a return address")
	}
}
