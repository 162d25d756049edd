package engine

import (
	"debug/elf"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// TestReleaseIdleBacksOff: a file let go after idle turns without a new
// address and read again waits twice as long before it is let go the next
// time, so that an object in steady use is not read over and over.
func TestReleaseIdleBacksOff(t *testing.T) {
	exe := testprog.Build(t, "c/leafnest.c", "-O2", "-g")
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var addrs []addrspace.ObjAddr
	for _, sy := range syms {
		if elf.ST_TYPE(sy.Info) == elf.STT_FUNC && sy.Value != 0 {
			addrs = append(addrs, addrspace.ObjAddr(sy.Value))
		}
	}
	s := NewSymbols(NewObjects(&perfdata.FileFeatures{}, Options{}))
	obj := &addrspace.Object{Path: exe}
	next := 0
	// turn adds a new address when asked, resolves, then lets go of
	// what was idle for 2 turns (or longer, once backed off)
	turn := func(add bool) {
		if add {
			s.Add(obj, 1, addrs[next])
			next++
		}
		s.ResolveAdded(false)
		s.ReleaseIdle(2)
	}
	turn(true)
	if s.Reads() != 1 {
		t.Fatalf("%d reads after the first address, want 1", s.Reads())
	}
	turn(false)
	turn(false) // idle 2 turns: let go
	turn(true)  // read again; now held for 4 idle turns
	if s.Reads() != 2 {
		t.Fatalf("%d reads, want 2 (let go after 2 idle turns, read again)", s.Reads())
	}
	turn(false)
	turn(false)
	turn(true) // 2 idle turns only: still held
	if s.Reads() != 2 {
		t.Errorf("%d reads, want 2: a file read again is held twice as long", s.Reads())
	}
	for range 4 {
		turn(false)
	}
	turn(true) // 4 idle turns: let go, read again
	if s.Reads() != 3 {
		t.Errorf("%d reads, want 3: held 4 idle turns, then let go", s.Reads())
	}
}
